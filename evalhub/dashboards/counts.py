"""The boards read counts kept as verdicts are written (evalhub.tallies), not the verdicts.

`battle_counts(filters)` gives the pairwise board and a model's page their cells; `judge_tallies()`
gives the judges board its agreement, flips and usage per judge run. `do_rebuild_tallies()` (the
`rebuild_tallies` command, and the first read after a deletion or a renamed slug) counts everything
again from the debates, verdicts and imported labels.
"""

from __future__ import annotations

from collections import defaultdict

from django.db import transaction
from django.db.models import Q

from evalhub.catalog.label_counts import imported_counts
from evalhub.debates.verdict_counts import do_count_all
from evalhub.reads.battles import Filters, judge_battles
from evalhub.reads.caching import fingerprint
from evalhub.tallies.actions import do_replace_counts, is_stale, lock_state
from evalhub.tallies.models import BATTLE_KEY, JUDGE_COUNTS, JUDGE_SUMS, BattleCount, JudgeTally


def do_rebuild_tallies(only_if_stale: bool = False) -> bool:
    """Count everything from scratch, one rebuild at a time; False when there was nothing to do."""
    with transaction.atomic():
        state = lock_state()  # a second rebuilder waits here, then finds the counts fresh
        if only_if_stale and not state.stale:
            return False
        battles, judges = do_count_all()
        for key, values in imported_counts().items():
            battles[key] = [a + b for a, b in zip(battles.get(key, [0, 0, 0]), values, strict=True)]
        do_replace_counts(battles, judges)
    return True


def fresh() -> None:
    """Rebuild the counts first if something they cannot follow changed (one cheap query otherwise)."""
    if is_stale():
        do_rebuild_tallies(only_if_stale=True)


def battle_counts(filters: Filters, model: str = "", stamp: str | None = None) -> list[BattleCount]:
    """The counted battles the filters keep (of one model, if given): a few hundred rows at most. The
    counts keep no judge, so a board of one judge counts that judge's own battles (`stamp`: the data's
    fingerprint, taken once by the caller)."""
    if filters.judge:
        return _judge_counts(filters, model, stamp or fingerprint())
    fresh()
    rows = BattleCount.objects.filter(source__in=filters.sources)
    for field in ("criterion", "scenario", "benchmark", "responses"):
        if getattr(filters, field):
            rows = rows.filter(**{field: getattr(filters, field)})
    if model:
        rows = rows.filter(Q(model_a=model) | Q(model_b=model))
    return list(rows.order_by())


def _judge_counts(filters: Filters, model: str, stamp: str) -> list[BattleCount]:
    """One judge's battles that the filters keep, counted as the tallies count (unsaved rows)."""
    counts: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0])
    for battle in judge_battles(filters.judge, stamp):
        if filters.keep(battle) and (not model or model in (battle.model_a, battle.model_b)):
            key = (battle.model_a, battle.model_b, battle.source, battle.criterion, battle.scenario)
            counts[(*key, battle.benchmark, battle.responses)][("a", "b", "tie").index(battle.outcome)] += 1
    return [
        BattleCount(**dict(zip(BATTLE_KEY, key, strict=True)), wins_a=a, wins_b=b, ties=t)
        for key, (a, b, t) in sorted(counts.items())
    ]


def sources_with_battles(filters: Filters) -> set[str]:
    """The sources that have counted battles under the filters' criterion, scenario, benchmark and
    responses, whichever sources the filters tick."""
    fresh()
    rows = BattleCount.objects.all()
    for field in ("criterion", "scenario", "benchmark", "responses"):
        if getattr(filters, field):
            rows = rows.filter(**{field: getattr(filters, field)})
    return set(rows.order_by().values_list("source", flat=True).distinct())


def battle_options() -> dict[str, set[str]]:
    """Every criterion, scenario, benchmark and response variant some counted battle has."""
    fresh()
    options: dict[str, set[str]] = defaultdict(set)
    for field in ("criterion", "scenario", "benchmark", "responses"):
        options[field] = set(BattleCount.objects.order_by().values_list(field, flat=True).distinct())
    return options


def judge_tallies() -> list:
    """Every judge run's tallies per scenario, as named tuples (thousands of rows: no model instances)."""
    fresh()
    fields = ("judge_run_id", "scenario", *JUDGE_COUNTS, *JUDGE_SUMS)
    return list(JudgeTally.objects.order_by("judge_run_id", "scenario").values_list(*fields, named=True))
