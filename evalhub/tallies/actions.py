"""Writes to the counts: added in the caller's transaction, so a count never disagrees with the
verdicts it sums; every change raises a version (after commit) that the boards' cache keys read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evalhub.system.bulk_insert import upsert
from evalhub.system.cache_versions import CacheVersion
from evalhub.tallies.models import (
    BATTLE_COUNTS,
    BATTLE_KEY,
    JUDGE_COUNTS,
    JUDGE_KEY,
    JUDGE_SUMS,
    BattleCount,
    JudgeTally,
    TallyState,
)

VERSION_KEY = "tallies:version"
VERSION = CacheVersion(VERSION_KEY)
_raise_version_after_commit = VERSION.raise_after_commit
_bump_version = VERSION.bump  # what a transaction holds pending (tests look for it)

BattleKey = tuple[str, str, str, str, str, str, str]  # BATTLE_KEY's fields, in order
JudgeKey = tuple[int, str]  # (judge run id, scenario)


def do_add_battles(deltas: Mapping[BattleKey, Sequence[int]]) -> None:
    """Add (wins of A, wins of B, ties) to each battle kind's counts (negative to take away)."""
    _add(BattleCount, BATTLE_KEY, BATTLE_COUNTS, deltas)


def do_add_judge_tallies(deltas: Mapping[JudgeKey, Sequence[float]]) -> None:
    """Add JUDGE_COUNTS then JUDGE_SUMS, in that order, to each (judge run, scenario) tally."""
    _add(JudgeTally, JUDGE_KEY, JUDGE_COUNTS + JUDGE_SUMS, deltas)


def _add(
    model: type[BattleCount] | type[JudgeTally], key_fields: Sequence[str], fields: Sequence[str], deltas: Mapping
) -> None:
    """Add each key's values to its row, creating the rows not there yet, in one statement (an UPDATE
    per key, then an INSERT in a savepoint for a new one, was most of a verdict's bookkeeping)."""
    # One order for every writer: two transactions adding to the same rows never wait on each other in a cycle.
    rows = [(*key, *deltas[key]) for key in sorted(deltas) if any(deltas[key])]
    if rows:
        upsert(model, key_fields, fields, rows, add=True)
        _raise_version_after_commit()


def note_change() -> None:
    """Something the boards read changed without changing the counts (a debate left unresolved):
    raise the version after commit all the same."""
    _raise_version_after_commit()


def do_replace_counts(battles: Mapping[BattleKey, Sequence[int]], judges: Mapping[JudgeKey, Sequence[float]]) -> None:
    """Every count replaced by these (a rebuild, in its transaction); the counts are no longer stale."""
    BattleCount.objects.all().delete()
    JudgeTally.objects.all().delete()
    BattleCount.objects.bulk_create(
        (
            BattleCount(**dict(zip(BATTLE_KEY + BATTLE_COUNTS, (*key, *values), strict=True)))
            for key, values in battles.items()
            if any(values)
        ),
        batch_size=2000,
    )
    JudgeTally.objects.bulk_create(
        (
            JudgeTally(**dict(zip(JUDGE_KEY + JUDGE_COUNTS + JUDGE_SUMS, (*key, *values), strict=True)))
            for key, values in judges.items()
            if any(values)
        ),
        batch_size=2000,
    )
    TallyState.objects.update_or_create(pk=1, defaults={"stale": False})
    _raise_version_after_commit()


def lock_state() -> TallyState:
    """The state row, locked until the transaction ends: one rebuild at a time."""
    TallyState.objects.get_or_create(pk=1)
    return TallyState.objects.select_for_update().get(pk=1)


def do_mark_stale() -> None:
    """The counts no longer match their sources (a slug changed, a debate was deleted): they are
    rebuilt before they are next read. A cascade calls this once per deleted row: the version is
    raised only by the call that turned the flag on (while it stays on, no board has been computed
    since the last raise, so no cached page holds the old counts)."""
    if TallyState.objects.filter(pk=1, stale=False).update(stale=True):
        _raise_version_after_commit()
    elif TallyState.objects.get_or_create(pk=1, defaults={"stale": True})[1]:
        _raise_version_after_commit()


def is_stale() -> bool:
    return TallyState.objects.filter(stale=True).exists()


def tally_version() -> int:
    """Changes after every committed change of the counts; the boards' cache keys include it."""
    return VERSION.current()
