"""What a generation run produced, and per model and hint tier: accuracy and win rate against the anchor.

Accuracy needs a final answer (stated, or the reference's \\boxed{…}); win rates come from the
pairs people or LLMs decided between a candidate's and the anchor's responses at the same tier
(debate consensus, human adjudication, single LLM judges). Both are recomputed when the data
they read changes (the dashboards' fingerprint plus the run's responses), never stored stale.
"""

from __future__ import annotations

import hashlib
from collections import Counter

from django.db.models import Count, Max, Q

from evalhub.catalog.models import LanguageModel, Prompt, Response
from evalhub.core.privileged.answers import answers_match, extract_answer
from evalhub.core.privileged.tiers import TierTable, tier_label, tier_table, win_value
from evalhub.core.runs.outcomes import ComponentFailure, Outcome
from evalhub.debates.models import Debate
from evalhub.generation.actions import hints_digest
from evalhub.generation.models import GenerationRun, PromptHints
from evalhub.generation.runner import CUT_OFF_NOTE, spec_of, stated_answer
from evalhub.generation.shapes import GenerationSummary, ModelTierRows, TierAnalysis, TierRow, TierTableRows
from evalhub.reads.battles import SOURCES, load_battles
from evalhub.reads.caching import cached, fingerprint
from evalhub.worklog.models import RowIssue


def run_responses(run: GenerationRun):
    # A whole benchmark by join, not by a list of ids (SQLite caps the parameters of one query).
    where = {"prompt_id__in": run.prompt_ids} if run.prompt_ids else {"prompt__benchmark_id": run.benchmark_id}
    return Response.objects.filter(
        **where, model__in=run.candidates.all(), parent__isnull=True, variant__in=run.variants
    )


def tier_of(run: GenerationRun) -> dict[str, int]:
    return {run.variant(t, s): t for t in run.tiers for s in range(run.samples)}


def counts(run: GenerationRun) -> dict[tuple[str, int], int]:
    tiers = tier_of(run)
    out: Counter = Counter()
    for slug, variant, n in run_responses(run).values_list("model__slug", "variant").annotate(n=Count("pk")):
        out[(slug, tiers[variant])] += n
    return dict(out)


def stale_hints(run: GenerationRun) -> int:
    """Responses above tier 0 whose hints were edited (or remade) after they were generated: a
    later run finds them by variant and keeps them, so the page says how many there are."""
    tiers = tier_of(run)
    rows = list(run_responses(run).values_list("prompt_id", "variant", "metadata"))
    hints = PromptHints.objects.filter(prompt_id__in=run_responses(run).values("prompt_id"))
    current = dict(hints.values_list("prompt_id", "hints"))
    stale = 0
    for prompt_id, variant, metadata in rows:
        tier = tiers[variant]
        if tier and (metadata or {}).get("hints_sha") != hints_digest(current.get(prompt_id, [])[:tier]):
            stale += 1
    return stale


def accuracy_observations(run: GenerationRun) -> list[tuple[str, int, int, float]]:
    tiers = tier_of(run)
    rows = list(run_responses(run).values_list("model__slug", "variant", "prompt_id", "text"))
    # Only the fields a final answer comes from: a prompt's source can be a whole paper.
    prompts = Prompt.objects.filter(pk__in=run_responses(run).values("prompt_id")).only(
        "reference_answer", "privileged", "metadata"
    )
    answers = {p.pk: stated_answer(p) for p in prompts}
    return [
        (
            slug,
            tiers[variant],
            prompt_id,
            float(answers_match(extract_answer(text), answers[prompt_id], run.answer_match)),
        )
        for slug, variant, prompt_id, text in rows
        if answers[prompt_id] is not None
    ]


def win_observations(run: GenerationRun, sources: tuple[str, ...], stamp: str) -> tuple[list, Counter]:
    """(model, tier, prompt, 1/0.5/0) for every decided pair of a candidate and the anchor at one tier."""
    if run.anchor is None:
        return [], Counter()
    tiers = tier_of(run)
    ids = run_responses(run).values_list("pk", flat=True)
    debates = {
        d["id"]: d
        for d in Debate.objects.filter(response_a__in=ids, response_b__in=ids).values(
            "id", "prompt_id", "response_a__variant", "response_b__variant"
        )
    }
    anchor = run.anchor.slug
    out: list[tuple[str, int, int, float]] = []
    by_source: Counter[str] = Counter()
    for battle in load_battles(stamp, with_judges="single_judge" in sources):
        row = debates.get(battle.debate)
        if row is None or battle.source not in sources or anchor not in (battle.model_a, battle.model_b):
            continue
        tier = tiers[row["response_a__variant"]]
        if tiers[row["response_b__variant"]] != tier:
            continue  # a pair across tiers says nothing about one tier
        model = battle.model_b if battle.model_a == anchor else battle.model_a
        outcome = battle.for_model(model)
        if outcome is not None:
            out.append((model, tier, row["prompt_id"], win_value(outcome)))
        by_source[battle.source] += 1
    return out, by_source


def table_rows(table: TierTable, tiers: list[int], models: list[str]) -> TierTableRows:
    """The layout of the paper's Table 3: a row per model, Overall then one column per tier."""
    rows = [
        TierRow(model=m, overall=table.cells.get((m, "overall")), cells=[table.cells.get((m, t)) for t in tiers])
        for m in models
        if (m, "overall") in table.cells
    ]
    separability = {s.tier: s for s in table.separability}
    return TierTableRows(
        tiers=[tier_label(t) for t in tiers], rows=rows, separability=[separability.get(t) for t in tiers]
    )


def data_stamp(run: GenerationRun, stamp: str | None = None) -> tuple[str, str]:
    """(the dashboards' fingerprint — `stamp` when this request took it already —, a key that also
    changes with the run's responses and its hints)."""
    responses = run_responses(run).aggregate(n=Count("pk"), last=Max("pk"))
    hints = PromptHints.objects.filter(prompt__benchmark=run.benchmark_id).aggregate(
        n=Count("pk"), edited=Max("edited_at")
    )
    stamp = stamp or fingerprint()
    key = f"{stamp}:{responses['n']}:{responses['last']}:{hints['n']}:{hints['edited']}"
    return stamp, hashlib.sha1(key.encode(), usedforsecurity=False).hexdigest()[:16]


def tier_analysis(
    run: GenerationRun, sources: tuple[str, ...] = tuple(SOURCES), stamp: str | None = None
) -> TierAnalysis:
    stamp, key = data_stamp(run, stamp)

    def compute() -> TierAnalysis:
        models = sorted(run.candidates.values_list("slug", flat=True))
        accuracy = tier_table(accuracy_observations(run), seed=run.seed)
        wins, by_source = win_observations(run, sources, stamp)
        opponents = [m for m in models if run.anchor is None or m != run.anchor.slug]
        return TierAnalysis(
            accuracy=table_rows(accuracy, run.tiers, models) if accuracy.cells else None,
            win_rate=table_rows(tier_table(wins, seed=run.seed), run.tiers, opponents) if wins else None,
            battles=dict(by_source),
            counts=counts(run),
            stale_hints=stale_hints(run),
        )

    return cached(f"generation:{run.pk}:{'+'.join(sorted(sources))}", compute, stamp=key)


def run_summary(run: GenerationRun) -> GenerationSummary:
    """What the job keeps when it finishes: counts per model and tier, usage and accuracy."""
    accuracy = tier_table(accuracy_observations(run), seed=run.seed)
    return GenerationSummary(
        responses={f"{m} · {tier_label(t)}": n for (m, t), n in sorted(counts(run).items())},
        usage={
            "calls": run.calls,
            "cached_calls": run.cached_calls,
            "input_tokens": run.input_tokens,
            "output_tokens": run.output_tokens,
            "cost_usd": round(run.cost_usd, 6),
        },
        accuracy={
            f"{m} · {tier_label(t) if isinstance(t, int) else 'overall'}": c.as_dict()
            for (m, t), c in accuracy.cells.items()
        },
    )


def generation_outcome(run: GenerationRun) -> Outcome:
    """Responses present against calls that gave none; a candidate with no response at all and
    failed calls is named with its first error. An answer cut at the token limit is kept (and
    reported), so it counts as produced."""
    failures = RowIssue.objects.filter(job=run.job, stage="generation").exclude(message__contains=CUT_OFF_NOTE)
    present = dict(run_responses(run).order_by().values_list("model__slug").annotate(n=Count("pk")))
    failed_components = []
    for model in run.candidates.order_by("slug"):
        mine = failures.filter(Q(label=model.slug) | Q(label__startswith=f"{model.slug} · "))
        first = mine.order_by("id").values_list("message", flat=True).first()
        if not present.get(model.slug) and first:
            failed_components.append(ComponentFailure("Candidate", spec_of(model), first))
    produced, failed = sum(present.values()), failures.count()
    return Outcome(
        planned=produced + failed, produced=produced, failed=failed, failed_components=tuple(failed_components)
    )


def model_tier_rows(model: LanguageModel, stamp: str, limit: int = 10) -> list[ModelTierRows]:
    """For a model's page: its accuracy and win-rate rows from its latest finished generation runs."""
    from evalhub.jobs.models import JobStatus

    runs = (
        GenerationRun.objects.filter(candidates=model, job__status=JobStatus.SUCCEEDED)
        .select_related("job", "benchmark", "template", "anchor")
        .order_by("-pk")[:limit]
    )
    out: list[ModelTierRows] = []
    for run in runs:
        analysis = tier_analysis(run, stamp=stamp)
        accuracy, win_rate = _row_of(analysis["accuracy"], model.slug), _row_of(analysis["win_rate"], model.slug)
        if accuracy or win_rate:
            out.append(
                ModelTierRows(run=run, tiers=[tier_label(t) for t in run.tiers], accuracy=accuracy, win_rate=win_rate)
            )
    return out


def _row_of(table: TierTableRows | None, model: str) -> TierRow | None:
    return next((row for row in table["rows"] if row["model"] == model), None) if table else None
