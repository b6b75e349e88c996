"""A GEM run's results: the GRE-bench table per variant, the validation table, per-response scores,
and each metric against people's grades (GEM's Table 1).

Read with a fixed number of queries whatever the run's size; the maths is evalhub.core.gem.pairs.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

from django.core.cache import cache

from evalhub.catalog.models import Judgment, LanguageModel, Response
from evalhub.core.gem.human_grades import GradeCorrelation, grade_table
from evalhub.core.gem.pairs import group_estimates, mean_difference
from evalhub.core.gem.validation import STRATEGIES
from evalhub.core.runs.outcomes import ComponentFailure, Outcome
from evalhub.core.text.overlap import BASELINES
from evalhub.scoring.models import ExaminerScore, GemPairScore, GemRun, GemVariant
from evalhub.scoring.shapes import Column, GemEntry, GemSummary, ResponseScore, ValidationRow
from evalhub.system.bounded_queries import where_in
from evalhub.worklog.models import RowIssue

VARIANT_LABELS = dict(GemVariant.choices)
POOLED = "human-pooled"  # the pooled human baseline row's key (no model has this slug: slugs are stored models')


def response_score_rows(run: GemRun) -> list[ResponseScore]:
    """One row per (variant, candidate response): its mean PMI and how many references it met."""
    sums: dict[tuple[str, int], list[float]] = defaultdict(list)
    truncated: set[tuple[str, int]] = set()
    for variant, candidate, pmi, cut in GemPairScore.objects.filter(run=run).values_list(
        "variant", "candidate_id", "pmi", "truncated"
    ):
        sums[(variant, candidate)].append(pmi)
        if cut:
            truncated.add((variant, candidate))
    responses = {
        r["pk"]: r
        for r in where_in(
            Response.objects.values(
                "pk", "prompt_id", "prompt__external_id", "model_id", "model__slug", "parent_id", "perturbation"
            ),
            "pk",
            sorted({c for _, c in sums}),
        )
    }
    rows: list[ResponseScore] = []
    for (variant, candidate), values in sorted(sums.items()):
        response = responses[candidate]
        rows.append(
            ResponseScore(
                variant=variant,
                response_id=candidate,
                prompt_id=response["prompt__external_id"],
                model=response["model__slug"],
                model_pk=response["model_id"],
                derived_from=response["parent_id"],
                strategy=response["perturbation"].split(":")[1] if response["perturbation"] else "",
                score=math.fsum(values) / len(values),
                references=len(values),
                truncated=(variant, candidate) in truncated,
            )
        )
    return rows


def gem_summary(run: GemRun) -> GemSummary:
    rows = response_score_rows(run)
    reference_models = set(run.reference_models.values_list("pk", flat=True))
    candidate_models = set(run.candidate_models.values_list("pk", flat=True))
    models = {m.pk: m for m in LanguageModel.objects.filter(pk__in=reference_models | candidate_models)}
    originals = [r for r in rows if r["derived_from"] is None]

    table: dict[str, list[GemEntry]] = {}
    for variant in run.variants:
        scores = {r["response_id"]: r["score"] for r in originals if r["variant"] == variant}
        groups = {r["response_id"]: r["model_pk"] for r in originals if r["variant"] == variant}
        estimates = group_estimates(scores, groups, bootstrap=run.bootstrap, seed=run.seed)
        entries: list[GemEntry] = []
        for model_pk, estimate in estimates.items():
            model = models[model_pk]
            entries.append(
                GemEntry(
                    model=model.slug,
                    name=model.display_name,
                    is_human=model.is_human,
                    baseline=model_pk in reference_models and model_pk not in candidate_models,
                    parameter_count=model.parameter_count,
                    **estimate.as_dict(),
                )
            )
        baseline = {r: s for r, s in scores.items() if groups[r] in reference_models - candidate_models}
        if len({groups[r] for r in baseline}) > 1:
            # GEM's "average human" row: every reviewer as candidate against the others, pooled over
            # reviewers (the paper's one human row), beside the per-reviewer rows.
            pooled = group_estimates(baseline, dict.fromkeys(baseline, POOLED), bootstrap=run.bootstrap, seed=run.seed)
            entries.append(
                GemEntry(
                    model=POOLED,
                    name="Average human (pooled over reviewers)",
                    is_human=True,
                    baseline=True,
                    pooled=True,
                    parameter_count=None,
                    **pooled[POOLED].as_dict(),
                )
            )
        table[variant] = sorted(entries, key=lambda e: -(e.get("mean") or -math.inf))

    validation = validation_table(run, rows, originals) if run.validation_strategies else {}
    return GemSummary(
        variants=[Column(key=v, label=VARIANT_LABELS.get(v, v)) for v in run.variants],
        table=table,
        validation=validation,
        validation_metrics=[
            Column(key=key, label=VARIANT_LABELS.get(key) or BASELINE_LABELS.get(key, key))
            for key in validation_metric_keys(run)
        ],
        interval="90% bootstrap (percentile)" if run.bootstrap else "90%: mean ± 1.645·SE",
        setup=setup_of(run),
        pairs=sum(r["references"] for r in rows),
        issues=run.issues.count(),
    )


EXAMINER = "lm-examiner"
BASELINE_LABELS = {**{key: label for key, (label, _) in BASELINES.items()}, EXAMINER: "LMExaminer"}


def validation_metric_keys(run: GemRun) -> list[str]:
    return [*run.variants, *BASELINES, *([EXAMINER] if run.examiner_lm else [])]


def validation_table(
    run: GemRun, rows: list[ResponseScore], originals: list[ResponseScore]
) -> dict[str, ValidationRow]:
    """Algorithm 1 per strategy and metric: each GEM variant, and ROUGE-L and BLEU of the raw
    texts over the same (candidate, reference) pairs (GEM, Appendix D.1 baselines)."""
    scores = {(r["variant"], r["response_id"]): r["score"] for r in rows}
    baseline_scores = baseline_response_scores(run)
    for key, per_response in baseline_scores.items():
        scores.update({(key, response): value for response, value in per_response.items()})
    for response, value in ExaminerScore.objects.filter(run=run).values_list("response_id", "score"):
        scores[(EXAMINER, response)] = value
    derived = [
        (r, original) for r in rows if (original := r["derived_from"]) is not None and r["variant"] == run.variants[0]
    ]
    table: dict[str, ValidationRow] = {}
    for strategy in run.validation_strategies:
        by_metric = {}
        for metric in validation_metric_keys(run):
            paired = [
                (scores[(metric, original)], scores[(metric, r["response_id"])])
                for r, original in derived
                if r["strategy"] == strategy and (metric, original) in scores and (metric, r["response_id"]) in scores
            ]
            by_metric[metric] = mean_difference([b for b, _ in paired], [a for _, a in paired], seed=run.seed).as_dict()
        meta = STRATEGIES[strategy]
        table[strategy] = ValidationRow(label=meta.label, kind=meta.kind, section=meta.section, by_metric=by_metric)
    return table


BASELINES_KEPT_S = 7 * 24 * 3600


def baseline_response_scores(run: GemRun) -> dict[str, dict[int, float]]:
    """Per baseline metric, each candidate's mean over the references it met in the first variant.
    About a millisecond per pair, and a finished run's pairs no longer change: its are computed once
    and kept for every later page that shows them (the grades table, the exports)."""
    finished = run.job.finished_at
    if finished is None:
        return _baseline_response_scores(run)
    # A resumed run finishes again: a new key. "nltk": the baselines' tokens since they follow GEM's D.1.
    key = f"gem:baselines:nltk:{run.pk}:{finished.timestamp()}"
    kept: dict[str, dict[int, float]] | None = cache.get_or_set(
        key, lambda: _baseline_response_scores(run), BASELINES_KEPT_S
    )
    return kept if kept is not None else _baseline_response_scores(run)  # a cache that stores nothing


def _baseline_response_scores(run: GemRun) -> dict[str, dict[int, float]]:
    pairs = list(
        GemPairScore.objects.filter(run=run, variant=run.variants[0]).values_list("candidate_id", "reference_id")
    )
    texts = dict(
        where_in(Response.objects.values_list("pk", "text"), "pk", sorted({i for pair in pairs for i in pair}))
    )
    out: dict[str, dict[int, float]] = {}
    for key, (_, metric) in BASELINES.items():
        per: dict[int, list[float]] = defaultdict(list)
        for candidate, reference in pairs:
            per[candidate].append(metric(texts[candidate], texts[reference]))
        out[key] = {candidate: math.fsum(values) / len(values) for candidate, values in per.items()}
    return out


SETUP_LABELS = {
    "evaluation_lm": "Evaluation LM",
    "dtype": "dtype",
    "preprocessing_lm": "Preprocessing LM",
    "imported_preprocessing": "Imported preprocessed texts",
    "prompt_version": "Prompt version",
    "validation_lm": "Validation LM",
    "examiner_lm": "LMExaminer LM",
}


def setup_of(run: GemRun) -> dict[str, str]:
    """What makes two runs comparable: shown beside every table and exported with it."""
    return {
        "evaluation_lm": run.evaluation_lm,
        "dtype": run.dtype,
        "preprocessing_lm": run.preprocessing_lm or "(none)",
        "imported_preprocessing": "used where present" if run.use_imported_preprocessing else "not used",
        "prompt_version": run.prompt_version,
        "validation_lm": run.validation_lm or "(none)",
        "examiner_lm": run.examiner_lm or "(none)",
    }


def gem_outcome(run: GemRun) -> Outcome:
    """Pairs scored against rows reported; an evaluation LM that scored nothing because it could
    not run (not loadable, no chat template, unreachable) is named as the failed component."""
    scored = GemPairScore.objects.filter(run=run).count()
    issues = RowIssue.objects.filter(job=run.job)
    # Planned pairs with no score; a reported row that stood for no planned pair (a lone reviewer
    # with no peer to score against) is shown on the page but is no failure.
    failed = max(0, run.job.progress_total - scored)
    failed_components: tuple[ComponentFailure, ...] = ()
    cause = ""
    if scored == 0:
        scoring = issues.filter(stage="scoring").values_list("message", flat=True).first()
        if scoring:
            failed_components = (ComponentFailure("Evaluation LM", run.evaluation_lm, scoring),)
        else:
            common = issues.values_list("message", flat=True).first()
            cause = f"No pair was scored: {common}" if common else "No pair was scored: nothing to compare."
    return Outcome(
        planned=max(scored, run.job.progress_total),
        produced=scored,
        failed=failed,
        failed_components=failed_components,
        cause=cause,
    )


def people_grades(response_ids: Iterable[int]) -> dict[str, dict[int, float]]:
    """Per criterion, each response's mean score by people (e.g. instructors' A/B/C grades imported as
    3/2/1 with import_scores)."""
    per: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    scored = Judgment.objects.filter(response_2__isnull=True, judge_model__is_human=True, score__isnull=False)
    for criterion, response, score in where_in(
        scored.values_list("criterion__slug", "response_id", "score"), "response_id", sorted(set(response_ids))
    ):
        if score is not None:  # the filter says so; the column's type does not
            per[criterion][response].append(score)
    return {
        criterion: {response: math.fsum(values) / len(values) for response, values in by_response.items()}
        for criterion, by_response in sorted(per.items())
    }


def grade_tables(run: GemRun, rows: list[ResponseScore] | None = None) -> dict[str, list[GradeCorrelation]]:
    """GEM's Table 1 per criterion people graded: every GEM variant of the run, ROUGE-L, BLEU and
    LMExaminer, each as Spearman's ρ with the people's grades over the original responses."""
    rows = response_score_rows(run) if rows is None else rows
    originals = [row for row in rows if row["derived_from"] is None]
    grades = people_grades({row["response_id"] for row in originals})
    if not grades:
        return {}
    metrics: list[tuple[str, dict[int, float]]] = [
        (VARIANT_LABELS[variant], {r["response_id"]: r["score"] for r in originals if r["variant"] == variant})
        for variant in run.variants
    ]
    original_ids = {row["response_id"] for row in originals}
    for key, per_response in baseline_response_scores(run).items():
        metrics.append((BASELINE_LABELS[key], {pk: value for pk, value in per_response.items() if pk in original_ids}))
    examiner = dict(
        where_in(ExaminerScore.objects.filter(run=run).values_list("response_id", "score"), "response_id", original_ids)
    )
    if examiner:
        metrics.append((BASELINE_LABELS[EXAMINER], examiner))
    return {criterion: grade_table(metrics, by_response, seed=run.seed) for criterion, by_response in grades.items()}
