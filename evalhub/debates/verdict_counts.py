"""Keeping the boards' counts (evalhub.tallies) equal to what debates and single judges decided.

`do_recount_debates(ids)` reads what those debates and every judge's verdicts on them say now
(a few rows per debate), compares it with what the counts hold for them (CountedDebate and
JudgeMajority rows), and adds the difference, in the caller's transaction. Every write that
settles or overrides a debate or stores judges' verdicts calls it with the debates it touched; a
second call changes nothing. Deleting what the counts were made from (an admin's cleanup) marks
them for a rebuild instead.

What counts is the same as evalhub.reads.battles builds from every verdict (the rebuild
command's test holds the two equal): a settled debate is a battle; a single judge's majority on a
pair, under the original criteria prompt, is a battle; a pair with a reference verdict counts
towards the judge's agreement (an unreadable answer as a miss), a pair judged both ways towards its
position flips.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from django.db import connection, transaction
from django.db.models import Model

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
from evalhub.system.bounded_queries import in_slices
from evalhub.system.bulk_insert import array, columns, table, upsert, upserts_together
from evalhub.tallies.actions import do_add_battles, do_add_judge_tallies, note_change
from evalhub.tallies.models import CONSENSUS, HUMAN, JUDGE_COUNTS, JUDGE_SUMS, SINGLE_JUDGE

BATTLE_SOURCE = {DebateStatus.CONSENSUS: CONSENSUS, DebateStatus.ADJUDICATED: HUMAN}
REFERENCE_STATUSES = (DebateStatus.CONSENSUS, DebateStatus.ADJUDICATED)
# What names a debate's battle (its models, criterion, scenario, benchmark, variant) and its outcome:
# read here to count, and by the boards' every-battle path (evalhub.reads.battles).
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
COUNTED_KEY = ("debate_id",)
COUNTED_VALUES = (
    "run_id",
    "model_a",
    "model_b",
    "criterion",
    "scenario",
    "benchmark",
    "responses",
    "swapped",
    "source",
    "outcome",
    "reference",
)
MAJORITY_KEY = ("judge_run_id", "debate_id")
MAJORITY_VALUES = (
    "same",
    "has_same",
    "reversed",
    "has_reversed",
    "calls",
    "cached",
    "input_tokens",
    "output_tokens",
    "latency_s",
)
# Debates per statement of a recount: the ids go in an IN list.
IDS_PER_STATEMENT = 1000


class Counted(NamedTuple):
    """A CountedDebate row's values (COUNTED_KEY + COUNTED_VALUES): what a debate adds to the counts."""

    debate_id: int
    run_id: int
    model_a: str
    model_b: str
    criterion: str
    scenario: str
    benchmark: str
    responses: str
    swapped: bool
    source: str
    outcome: str
    reference: int | None


class Majority(NamedTuple):
    """A JudgeMajority row's values (MAJORITY_KEY + MAJORITY_VALUES): one judge run on one debate."""

    judge_run_id: int
    debate_id: int
    same: int | None
    has_same: bool
    reversed: int | None
    has_reversed: bool
    calls: int
    cached: int
    input_tokens: int
    output_tokens: int
    latency_s: float


def do_recount_debates(debate_ids: Collection[int]) -> None:
    """Bring the counts of these debates, and of every judge's verdicts on them, up to date."""
    if not debate_ids:
        return
    ids = sorted(set(debate_ids))
    # The caller's transaction (no savepoint: an error ends it anyway); its own when called on its own.
    with transaction.atomic(savepoint=False):
        # Locked in id order, and read by the same statement: two writers recounting the same debate
        # take turns, and never deadlock (only the debates' rows are locked, not the rows joined to them).
        locked = Debate.objects.select_for_update(of=("self",)).filter(pk__in=ids).order_by("pk")
        fresh = {row["id"]: _counted(row) for row in locked.values(*DEBATE_FIELDS)}
        stored = {row.debate_id: row for row in _stored_counted(ids)}
        stored_majorities = _stored_majorities(ids)
        fresh_majorities = _majorities(_verdict_rows(ids))
        runs = _runs({m.judge_run_id for m in stored_majorities} | {m.judge_run_id for m in fresh_majorities})
        # One statement for the upserts on PostgreSQL; the deletions go at once (their rows are these
        # debates' own, which no upsert here writes, and held by their lock).
        with upserts_together():
            _add_difference(stored, stored_majorities, fresh, fresh_majorities, runs)
            # Only the rows that changed are written: a settled debate changes its own row and no judge's.
            stale = [i for i in ids if stored.get(i) != fresh.get(i)]
            CountedDebate.objects.filter(debate_id__in=[i for i in stale if i not in fresh]).delete()
            upsert(CountedDebate, COUNTED_KEY, COUNTED_VALUES, [fresh[i] for i in stale if i in fresh], add=False)
            _write_changed_majorities(stored_majorities, fresh_majorities)
        note_change()  # the judge lab reads debates' states, which change without a count changing


def do_recount_judge_run(run: JudgeRun, debate_ids: Collection[int]) -> None:
    """Bring one judge run's counts on these debates up to date after its verdicts on them were
    written: the debates' own counts do not change, so only that run's majorities are read and
    rewritten (a whole recount reads every judge's verdicts on the debates). Two statements read
    and one writes (PostgreSQL; elsewhere one per table), whatever the chunk's size, so that a
    chunk's bookkeeping stays near the cost of its verdicts' own write (benchmarks/dashboard_latency.py)."""
    if not debate_ids:
        return
    ids = sorted(set(debate_ids))
    with transaction.atomic(savepoint=False):
        counted, stored, verdicts = _lock_and_read(run.pk, ids)
        if len(counted) < len(ids):  # a debate never counted: the whole recount counts it first
            do_recount_debates(ids)
            return
        fresh = _majorities(verdicts)
        runs = {run.pk: {"criteria_variant": run.criteria_variant, "check_position": run.check_position}}
        with upserts_together():  # battles, judges' tallies, majorities: one statement on PostgreSQL
            # The debates' own battles are the same before and after: only the majorities' part is counted.
            _add_difference(counted, stored, counted, fresh, runs, own_battles=False)
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
    upsert(CountedDebate, COUNTED_KEY, COUNTED_VALUES, list(debates.values()), add=False)
    upsert(JudgeMajority, MAJORITY_KEY, MAJORITY_VALUES, judged, add=False)
    return _contributions(debates, judged, _runs({m.judge_run_id for m in judged}))


def _add_difference(
    stored: Mapping[int, Counted],
    stored_majorities: Iterable[Majority],
    fresh: Mapping[int, Counted],
    fresh_majorities: Iterable[Majority],
    runs: dict[int, dict],
    *,
    own_battles: bool = True,
) -> None:
    old_battles, old_judges = _contributions(stored, stored_majorities, runs, own_battles=own_battles)
    new_battles, new_judges = _contributions(fresh, fresh_majorities, runs, own_battles=own_battles)
    do_add_battles(_difference(new_battles, old_battles))
    do_add_judge_tallies(_difference(new_judges, old_judges))


def _write_changed_majorities(before: Iterable[Majority], after: Iterable[Majority]) -> None:
    stored = {(m.judge_run_id, m.debate_id): m for m in before}
    fresh = {(m.judge_run_id, m.debate_id): m for m in after}
    for run_id, debate_id in stored.keys() - fresh.keys():  # verdicts deleted (rare: it marks the counts stale)
        JudgeMajority.objects.filter(judge_run_id=run_id, debate_id=debate_id).delete()
    changed = [fresh[key] for key in sorted(fresh) if stored.get(key) != fresh[key]]
    upsert(JudgeMajority, MAJORITY_KEY, MAJORITY_VALUES, changed, add=False)


def _lock_and_read(run_id: int, ids: list[int]) -> tuple[dict[int, Counted], list[Majority], list[tuple]]:
    """Lock these debates (in id order, as a whole recount does: the two take turns on a debate), then
    read in one statement how they are counted, this run's majorities on them and its verdicts
    (VERDICT_FIELDS). The read is a statement of its own: one that also locked would return the
    rows as they were when it began, before it waited for a lock, and count against what the
    holder of the lock has since committed (PostgreSQL refreshes only the locked row)."""
    counted: dict[int, Counted] = {}
    majorities: dict[int, Majority] = {}
    verdicts: list[tuple] = []
    counted_width, majority_width = len(COUNTED_KEY) + len(COUNTED_VALUES), len(MAJORITY_KEY) + len(MAJORITY_VALUES)
    for part in in_slices(ids, IDS_PER_STATEMENT):
        lock, read = _statements(_listed(part), connection.vendor)
        if connection.features.has_select_for_update:  # SQLite's IMMEDIATE transaction holds the database
            _select(lock, _ids(part))
        for row in _select(read, [*_ids(part), run_id, run_id, *_ids(part)]):
            if row[0] is not None and row[0] not in counted:  # a row per verdict: the debate's first
                counted[row[0]] = Counted._make(row[:counted_width])
            majority = row[counted_width : counted_width + majority_width]
            if majority[0] is not None and majority[1] not in majorities:
                majorities[majority[1]] = Majority._make(majority)
            verdict = row[counted_width + majority_width :]
            if verdict[0] is not None:
                verdicts.append(verdict)
    return counted, list(majorities.values()), verdicts


@functools.cache
def _statements(debates: int | None, vendor: str) -> tuple[str, str]:
    """A chunk's lock, and its read of the counted rows, the run's majorities and its verdicts."""
    counted_columns = ", ".join(f"c.{column}" for column in columns(CountedDebate, (*COUNTED_KEY, *COUNTED_VALUES)))
    majority_columns = ", ".join(f"m.{column}" for column in columns(JudgeMajority, (*MAJORITY_KEY, *MAJORITY_VALUES)))
    verdict_columns = ", ".join(f"v.{column}" for column in columns(JudgeVerdict, VERDICT_FIELDS))
    counted_debate, majority_debate, majority_run, verdict_debate, verdict_run = (
        *columns(CountedDebate, ("debate_id",)),
        *columns(JudgeMajority, ("debate_id", "judge_run_id")),
        *columns(JudgeVerdict, ("debate_id", "judge_run_id")),
    )
    debate_pk = connection.ops.quote_name(Debate._meta.pk.column)
    lock = (
        f"SELECT d.{debate_pk} FROM {table(Debate)} d WHERE {_among(f'd.{debate_pk}', debates)} "
        f"ORDER BY d.{debate_pk} FOR UPDATE"
    )
    # The ids are named for the counted rows too: PostgreSQL does not carry an IN list across a join's
    # equality, and without it hashed every counted debate (a sequential scan) to join a chunk's 25.
    read = (
        f"SELECT {counted_columns}, {majority_columns}, {verdict_columns} FROM {table(Debate)} d "
        f"LEFT JOIN {table(CountedDebate)} c "
        f"ON c.{counted_debate} = d.{debate_pk} AND {_among(f'c.{counted_debate}', debates)} "
        f"LEFT JOIN {table(JudgeMajority)} m ON m.{majority_debate} = d.{debate_pk} AND m.{majority_run} = %s "
        f"LEFT JOIN {table(JudgeVerdict)} v ON v.{verdict_debate} = d.{debate_pk} AND v.{verdict_run} = %s "
        f"WHERE {_among(f'd.{debate_pk}', debates)} ORDER BY d.{debate_pk}"
    )
    return lock, read


def _listed(ids: Sequence[int]) -> int | None:
    """The placeholders an IN list of these ids takes; None on PostgreSQL, where they go as one array:
    a short statement that psycopg converts once and caches, where it splits an IN list's
    placeholders with a regular expression on every call."""
    return None if connection.vendor == "postgresql" else len(ids)


def _among(column: str, listed: int | None) -> str:
    """SQL saying that `column` is one of the ids `_listed` measured, given as `_ids(ids)`."""
    return f"{column} = ANY(%s::bigint[])" if listed is None else f"{column} IN ({', '.join(['%s'] * listed)})"


def _ids(ids: Sequence[int]) -> list[Any]:
    return [array(ids)] if _listed(ids) is None else list(ids)


def _stored_counted(ids: list[int]) -> list[Counted]:
    fields = (*COUNTED_KEY, *COUNTED_VALUES)
    return [Counted._make(row) for row in _select_where(CountedDebate, fields, "debate_id", ids)]


def _stored_majorities(ids: list[int]) -> list[Majority]:
    fields = (*MAJORITY_KEY, *MAJORITY_VALUES)
    return [Majority._make(row) for row in _select_where(JudgeMajority, fields, "debate_id", ids)]


def _verdict_rows(ids: list[int]) -> list[tuple]:
    """VERDICT_FIELDS of the verdicts on these debates."""
    return _select_where(JudgeVerdict, VERDICT_FIELDS, "debate_id", ids)


def _select_where(model: type[Model], fields: Sequence[str], field: str, ids: list[int]) -> list[tuple]:
    """These fields of the model's rows whose `field` is one of the ids."""
    names = ", ".join(columns(model, fields))
    column = columns(model, (field,))[0]
    rows: list[tuple] = []
    for part in in_slices(ids, IDS_PER_STATEMENT):
        rows += _select(f"SELECT {names} FROM {table(model)} WHERE {_among(column, _listed(part))}", _ids(part))
    return rows


def _select(sql: str, params: list[Any]) -> list[tuple]:
    """Plain tuples, without the ORM building a query (a quarter of a millisecond each, most of a
    chunk's bookkeeping when it made one per step)."""
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return cursor.fetchall()


def _counted(row: dict) -> Counted:
    settled = row["status"] in REFERENCE_STATUSES
    return Counted(
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


def _majorities(rows: Iterable[tuple]) -> list[Majority]:
    """One majority per (judge run, debate) from its verdict rows (VERDICT_FIELDS)."""
    grouped: dict[tuple[int, int], list[tuple]] = defaultdict(list)
    for row in rows:
        grouped[(row[0], row[1])].append(row)
    out = []
    for (run_id, debate_id), samples in grouped.items():
        same, reversed_, _ = majorities((debate_id, bool(r[2]), r[3]) for r in samples)
        out.append(
            Majority(
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
    debates: Mapping[int, Counted], judged: Iterable[Majority], runs: dict[int, dict], *, own_battles: bool = True
) -> tuple[dict, dict]:
    """What these debates (unless not `own_battles`) and majorities add to the battle counts and to the
    judges' tallies."""
    battles: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
    judges: dict[tuple, list[float]] = defaultdict(lambda: [0] * len(JUDGE_FIELDS))
    for counted in debates.values() if own_battles else ():
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


def _add_battle(battles: dict, counted: Counted, source: str, outcome: str) -> None:
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
