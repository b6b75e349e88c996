"""Keeping the boards' counts (evalhub.tallies) equal to what debates and single judges decided.

`do_recount_debates(ids)` reads what those debates and every judge's verdicts on them say now
(a few rows per debate), compares it with what the counts hold for them (CountedDebate and
JudgeMajority rows), and adds the difference, in the caller's transaction. Every write that
settles or overrides a debate or stores judges' verdicts calls it with the debates it touched; a
second call changes nothing. Deleting what the counts were made from (an admin's cleanup) marks
them for a rebuild instead.

What counts is the same as evalhub.dashboards.battles builds from every verdict (the rebuild
command's test holds the two equal): a settled debate is a battle; a single judge's majority on a
pair, under the original criteria prompt, is a battle; a pair with a reference verdict counts
towards the judge's agreement (an unreadable answer as a miss), a pair judged both ways towards its
position flips.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Iterable
from typing import Any

from django.db import transaction

from evalhub.catalog.models import IMPORTED_VARIANT
from evalhub.core.prompts.criteria_variants import ORIGINAL
from evalhub.core.statistics.agreement import majorities, position_flip_rate, unswap
from evalhub.debates.models import (
    CountedDebate,
    Debate,
    DebateStatus,
    JudgeMajority,
    JudgeRun,
    JudgeVerdict,
    winner_for,
)
from evalhub.tallies.actions import do_add_battles, do_add_judge_tallies, note_change
from evalhub.tallies.models import CONSENSUS, HUMAN, JUDGE_COUNTS, JUDGE_SUMS, SINGLE_JUDGE

BATTLE_SOURCE = {DebateStatus.CONSENSUS: CONSENSUS, DebateStatus.ADJUDICATED: HUMAN}
REFERENCE_STATUSES = (DebateStatus.CONSENSUS, DebateStatus.ADJUDICATED)
# What names a debate's battle (its models, criterion, scenario, benchmark, variant) and its outcome:
# read here to count, and by the boards' every-battle path (evalhub.dashboards.battles).
BATTLE_FIELDS = (
    "id",
    "status",
    "winner",
    "swapped",
    "prompt__category",
    "run__criterion__slug",
    "run__benchmark__slug",
    "run__variant",
    "response_a__model__slug",
    "response_b__model__slug",
)
DEBATE_FIELDS = (*BATTLE_FIELDS, "run_id", "verdict")
VERDICT_FIELDS = (
    "judge_run_id",
    "debate_id",
    "reversed_order",
    "verdict",
    "cached",
    "input_tokens",
    "output_tokens",
    "latency_s",
)
JUDGE_FIELDS = JUDGE_COUNTS + JUDGE_SUMS
SLOT = {name: index for index, name in enumerate(JUDGE_FIELDS)}


def do_recount_debates(debate_ids: Collection[int]) -> None:
    """Bring the counts of these debates, and of every judge's verdicts on them, up to date."""
    if not debate_ids:
        return
    ids = sorted(set(debate_ids))
    with transaction.atomic():  # the caller's transaction; its own when called on its own
        # Locked in id order: two writers recounting the same debate take turns, and never deadlock.
        list(Debate.objects.select_for_update().filter(pk__in=ids).order_by("pk").values_list("pk", flat=True))
        fresh = {row["id"]: _counted(row) for row in Debate.objects.filter(pk__in=ids).values(*DEBATE_FIELDS)}
        _replace(ids, fresh, _majorities_now(ids))
        note_change()  # the judge lab reads debates' states, which change without a count changing


def do_recount_judge_run(run_id: int, debate_ids: Collection[int]) -> None:
    """Bring one judge run's counts on these debates up to date after its verdicts on them were
    written: the debates' own counts do not change, so only that run's majorities are read and
    rewritten (a whole recount read every judge's verdicts on the debates)."""
    if not debate_ids:
        return
    ids = sorted(set(debate_ids))
    with transaction.atomic():
        # The same lock, in the same order, as a whole recount: the two take turns on a debate.
        list(Debate.objects.select_for_update().filter(pk__in=ids).order_by("pk").values_list("pk", flat=True))
        counted = CountedDebate.objects.in_bulk(ids)
        if len(counted) < len(ids):  # a debate never counted: the whole recount counts it first
            do_recount_debates(ids)
            return
        verdicts = JudgeVerdict.objects.filter(judge_run_id=run_id, debate_id__in=ids).order_by()
        fresh = _majorities(verdicts.values_list(*VERDICT_FIELDS))
        stored = list(JudgeMajority.objects.filter(judge_run_id=run_id, debate_id__in=ids))
        runs = _runs([run_id])
        old_battles, old_judges = _contributions(counted, stored, runs)
        new_battles, new_judges = _contributions(counted, fresh, runs)
        do_add_battles(_difference(new_battles, old_battles))
        do_add_judge_tallies(_difference(new_judges, old_judges))
        _write_changed_majorities(stored, fresh)
        note_change()


def do_count_all() -> tuple[dict, dict]:
    """Count every debate and every judge's verdicts from scratch (the rebuild): the CountedDebate
    and JudgeMajority rows are written anew; the battle and judge counts are returned, to be stored
    together with the imported ones."""
    CountedDebate.objects.all().delete()
    JudgeMajority.objects.all().delete()
    debates = {row["id"]: _counted(row) for row in Debate.objects.order_by().values(*DEBATE_FIELDS).iterator(5000)}
    judged = _majorities(JudgeVerdict.objects.order_by().values_list(*VERDICT_FIELDS).iterator(20000))
    CountedDebate.objects.bulk_create(debates.values(), batch_size=2000)
    JudgeMajority.objects.bulk_create(judged, batch_size=2000)
    return _contributions(debates, judged, _runs({m.judge_run_id for m in judged}))


def _replace(ids: list[int], fresh_debates: dict[int, CountedDebate], fresh_majorities: list[JudgeMajority]) -> None:
    stored_debates = CountedDebate.objects.in_bulk(ids)
    stored_majorities = list(JudgeMajority.objects.filter(debate_id__in=ids))
    runs = _runs({m.judge_run_id for m in stored_majorities} | {m.judge_run_id for m in fresh_majorities})
    old_battles, old_judges = _contributions(stored_debates, stored_majorities, runs)
    new_battles, new_judges = _contributions(fresh_debates, fresh_majorities, runs)
    do_add_battles(_difference(new_battles, old_battles))
    do_add_judge_tallies(_difference(new_judges, old_judges))
    # Only the rows that changed are written: a judge run's chunk changes that run's majorities on its
    # debates, not the other runs' nor the debates' (rewriting all of them was most of a recount).
    stale_debates = [i for i in ids if _fields(stored_debates.get(i)) != _fields(fresh_debates.get(i))]
    CountedDebate.objects.filter(debate_id__in=stale_debates).delete()
    CountedDebate.objects.bulk_create(fresh_debates[i] for i in stale_debates if i in fresh_debates)
    _write_changed_majorities(stored_majorities, fresh_majorities)


def _write_changed_majorities(before: Iterable[JudgeMajority], after: Iterable[JudgeMajority]) -> None:
    stored = {(m.judge_run_id, m.debate_id): m for m in before}
    fresh = {(m.judge_run_id, m.debate_id): m for m in after}
    stale = [key for key in stored.keys() | fresh.keys() if _fields(stored.get(key)) != _fields(fresh.get(key))]
    gone = [stored[key].pk for key in stale if key in stored]
    if gone:
        JudgeMajority.objects.filter(pk__in=gone).delete()
    JudgeMajority.objects.bulk_create(fresh[key] for key in stale if key in fresh)


def _fields(row: CountedDebate | JudgeMajority | None) -> tuple | None:
    """A count row's values, its own id aside (None for no row): what decides whether it is rewritten."""
    if row is None:
        return None
    return tuple(getattr(row, field.attname) for field in row._meta.concrete_fields if field.name != "id")


def _counted(row: dict) -> CountedDebate:
    settled = row["status"] in REFERENCE_STATUSES
    return CountedDebate(
        debate_id=row["id"],
        run_id=row["run_id"],
        model_a=row["response_a__model__slug"],
        model_b=row["response_b__model__slug"],
        criterion=row["run__criterion__slug"],
        scenario=row["prompt__category"] or "—",
        benchmark=row["run__benchmark__slug"],
        responses=row["run__variant"] or IMPORTED_VARIANT,
        swapped=row["swapped"],
        source=BATTLE_SOURCE[row["status"]] if settled and row["winner"] else "",
        outcome=str(row["winner"]) if settled else "",  # Winner's values are the outcomes: a, b, tie
        reference=row["verdict"] if settled else None,
    )


def _majorities_now(ids: list[int]) -> list[JudgeMajority]:
    return _majorities(JudgeVerdict.objects.filter(debate_id__in=ids).order_by().values_list(*VERDICT_FIELDS))


def _majorities(rows: Iterable[tuple]) -> list[JudgeMajority]:
    """One JudgeMajority per (judge run, debate) from its verdict rows (VERDICT_FIELDS)."""
    grouped: dict[tuple[int, int], list[tuple]] = defaultdict(list)
    for row in rows:
        grouped[(row[0], row[1])].append(row)
    out = []
    for (run_id, debate_id), samples in grouped.items():
        same, reversed_, _ = majorities((debate_id, bool(r[2]), r[3]) for r in samples)
        out.append(
            JudgeMajority(
                judge_run_id=run_id,
                debate_id=debate_id,
                same=same.get(debate_id),
                has_same=debate_id in same,
                reversed=reversed_.get(debate_id),
                has_reversed=debate_id in reversed_,
                calls=len(samples),
                cached=sum(bool(r[4]) for r in samples),
                input_tokens=sum(r[5] for r in samples),
                output_tokens=sum(r[6] for r in samples),
                latency_s=sum(r[7] for r in samples),
            )
        )
    return out


def _runs(run_ids: Iterable[int]) -> dict[int, dict]:
    fields = ("id", "criteria_variant", "check_position")
    return {run["id"]: run for run in JudgeRun.objects.filter(pk__in=list(run_ids)).values(*fields)}


def _contributions(
    debates: dict[int, CountedDebate], judged: Iterable[JudgeMajority], runs: dict[int, dict]
) -> tuple[dict, dict]:
    """What these debates and majorities add to the battle counts and to the judges' tallies."""
    battles: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
    judges: dict[tuple, list[float]] = defaultdict(lambda: [0] * len(JUDGE_FIELDS))
    for counted in debates.values():
        if counted.outcome and counted.model_a != counted.model_b:
            _add_battle(battles, counted, counted.source, counted.outcome)
    for majority in judged:
        judged_debate, run = debates.get(majority.debate_id), runs.get(majority.judge_run_id)
        if judged_debate is None or run is None:
            continue  # deleted: a deletion marks the counts for a rebuild (evalhub.tallies.signals)
        if run["criteria_variant"] == ORIGINAL and majority.has_same and majority.same is not None:
            if judged_debate.model_a != judged_debate.model_b:
                outcome = str(winner_for(majority.same, judged_debate.swapped))
                _add_battle(battles, judged_debate, SINGLE_JUDGE, outcome)
        tally = judges[(majority.judge_run_id, judged_debate.scenario)]
        if judged_debate.reference is not None and majority.has_same:
            tally[SLOT["judged"]] += 1
            tally[SLOT["hits"]] += majority.same == judged_debate.reference
            if majority.same is not None:
                tally[SLOT[f"predicted_{majority.same}"]] += 1
            tally[SLOT[f"expected_{judged_debate.reference}"]] += 1
        if run["check_position"] and majority.has_same and majority.has_reversed:
            flips = position_flip_rate([majority.same], [unswap(majority.reversed)])
            tally[SLOT["flips"]] += flips.hits
            tally[SLOT["flip_pairs"]] += flips.total
        for name in ("calls", "cached", "input_tokens", "output_tokens", "latency_s"):
            tally[SLOT[name]] += getattr(majority, name)
    return battles, judges


def _add_battle(battles: dict, counted: CountedDebate, source: str, outcome: str) -> None:
    key = (
        counted.model_a,
        counted.model_b,
        source,
        counted.criterion,
        counted.scenario,
        counted.benchmark,
        counted.responses,
    )
    battles[key][("a", "b", "tie").index(outcome)] += 1


def _difference(new: dict[Any, list[Any]], old: dict[Any, list[Any]]) -> dict[Any, list[Any]]:
    out = {}
    for key in new.keys() | old.keys():
        after, before = new.get(key), old.get(key)
        width = len(after) if after is not None else len(before or [])
        out[key] = [n - o for n, o in zip(after or [0] * width, before or [0] * width, strict=True)]
    return out
