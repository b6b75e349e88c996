"""What a DHP or YESciEval run says: mean scores, the DHP report per judge, the optimism-bias report,
and the outcome its state is derived from."""

from __future__ import annotations

import math
from collections import defaultdict

from django.db.models import Count, Q

from evalhub.catalog.models import Response
from evalhub.core.dhp.report import Groups, add_pair, bootstrap_d_avg, build_report
from evalhub.core.runs.outcomes import ComponentFailure, Outcome
from evalhub.core.yescieval.optimism import optimism_report
from evalhub.scoring.models import (
    DiscernmentFamily,
    DiscernmentRun,
    JudgeScore,
)
from evalhub.scoring.shapes import (
    DiscernmentSummary,
    JudgeQuality,
    ScorePair,
)
from evalhub.system.bounded_queries import where_in
from evalhub.worklog.models import RowIssue


def perturbation_key(name: str, severity: str) -> str:
    return f"{name} ({severity})"


def mean_scores(run: DiscernmentRun) -> dict[tuple[str, int, str], float]:
    """(judge, response, metric) → the mean of its valid repeats."""
    sums: dict[tuple[str, int, str], list[float]] = defaultdict(list)
    for judge, response, metric, score in JudgeScore.objects.filter(run=run, valid=True).values_list(
        "judge", "response_id", "metric", "score"
    ):
        if score is not None:  # a valid score always has one (a_valid_score_is_1_to_5)
            sums[(judge, response, metric)].append(score)
    return {key: math.fsum(values) / len(values) for key, values in sums.items()}


def score_rows(run: DiscernmentRun) -> list[ScorePair]:
    """The dhp_report input rows (one per judge, item, perturbation and metric), from the stored scores."""
    means = mean_scores(run)
    derived = where_in(
        Response.objects.filter(parent__isnull=False).values_list(
            "pk", "parent_id", "perturbation", "perturbation_severity", "perturbation_level"
        ),
        "pk",
        sorted({response for _, response, _ in means}),
    )
    rows: list[ScorePair] = []
    for pk, parent, name, severity, level in derived:
        for judge in run.judges:
            for metric in run.metrics:
                original, perturbed = means.get((judge, parent, metric)), means.get((judge, pk, metric))
                if original is None or perturbed is None:
                    continue  # an invalid or missing score on either side: the pair is left out
                rows.append(
                    ScorePair(
                        judge=judge,
                        item_id=parent,
                        perturbation=perturbation_key(name, severity),
                        level=level or "S",
                        metric=metric,
                        original_score=original,
                        perturbed_score=perturbed,
                    )
                )
    return rows


def _run_weights(run: DiscernmentRun) -> dict | None:
    """The run's expert weights keyed like its perturbations in the scores ("name (severity)"); the
    report restricts them to the metrics scored and renormalises them (expert_weights.fit_weights),
    the same rule `dhp_report` applies to a job's exports."""
    if not run.weights:
        return None
    keyed = {
        perturbation_key(name, severity): run.weights[name]
        for name, severity in run.perturbations
        if run.weights.get(name)
    }
    return keyed or None


def discernment_summary(run: DiscernmentRun) -> DiscernmentSummary:
    counted = {
        row["judge"]: row
        for row in JudgeScore.objects.filter(run=run)
        .values("judge")
        .annotate(
            scores=Count("pk"), invalid=Count("pk", filter=Q(valid=False)), reasked=Count("pk", filter=Q(reasked=True))
        )
    }
    quality = {
        judge: JudgeQuality(
            scores=counted.get(judge, {}).get("scores", 0),
            invalid=counted.get(judge, {}).get("invalid", 0),
            reasked=counted.get(judge, {}).get("reasked", 0),
        )
        for judge in run.judges
    }
    summary = DiscernmentSummary(family=run.family, quality=quality, issues=run.job.row_issues.count())
    if run.family == DiscernmentFamily.YESCIEVAL:
        means = mean_scores(run)
        found = where_in(
            Response.objects.values_list("pk", "perturbation", "parent_id"), "pk", sorted({r for _, r, _ in means})
        )
        responses, parents = {}, {}
        for pk, perturbation, parent in found:
            responses[pk], parents[pk] = perturbation, parent
        ratings = []
        for (judge, response, metric), rating in means.items():
            name = responses[response]
            variant = "benign" if not name else name.rsplit("_", 1)[1]
            ratings.append((judge, metric, str(parents[response] or response), variant, rating))
        report = optimism_report(ratings)
        summary["optimism"] = {
            judge: {rubric: {v: s.as_dict() for v, s in by_variant.items()} for rubric, by_variant in rubrics.items()}
            for judge, rubrics in report.items()
        }
        return summary
    groups: Groups = {}
    for row in score_rows(run):
        pair = (row["original_score"], row["perturbed_score"])
        add_pair(groups, (row["judge"], row["perturbation"]), row["level"], row["metric"], row["item_id"], pair)
    weights = _run_weights(run)
    summary["dhp"] = build_report(groups, weights) if groups else {"judges": {}, "notes": {}}
    summary["dhp"]["intervals"] = bootstrap_d_avg(groups, weights, seed=run.seed) if groups else {}
    summary["weights_source"] = run.weights_source or "uniform (no expert weights)"
    return summary


def discernment_outcome(run: DiscernmentRun, summary: DiscernmentSummary) -> Outcome:
    """Judge calls planned, scored, invalid and failed; a judge that produced no usable score is
    named with its first error (or its first unreadable answer), never left out silently."""
    judging = RowIssue.objects.filter(job=run.job, stage="judging")
    first_error: dict[str, str] = {}
    for message in judging.order_by("id").values_list("message", flat=True):
        judge = next((j for j in run.judges if message.startswith(f"{j}: ")), None)
        if judge is not None:
            first_error.setdefault(judge, message[len(judge) + 2 :])
    failed_components = []
    for judge in run.judges:
        quality = summary["quality"][judge]
        valid = quality["scores"] - quality["invalid"]
        if valid > 0:
            continue
        if quality["invalid"]:
            example = JudgeScore.objects.filter(run=run, judge=judge, valid=False).values_list("raw", flat=True).first()
            cause = f"none of its {quality['invalid']:,} answers gave a score (e.g. {(example or '')[:80]!r})"
        else:
            cause = first_error.get(judge, "no answer was stored")
        failed_components.append(ComponentFailure("Judge", judge, cause))
    failed = judging.count()
    invalid = sum(q["invalid"] for q in summary["quality"].values())
    produced = sum(q["scores"] for q in summary["quality"].values()) - invalid
    return Outcome(
        planned=produced + invalid + failed,
        produced=produced,
        failed=failed,
        invalid=invalid,
        failed_components=tuple(failed_components),
        cause="No judge produced a score: every text failed to be perturbed or judged (see the reported rows).",
    )
