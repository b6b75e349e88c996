"""The counts' own statements (evalhub.tallies.sql), on every configured database: PostgreSQL and
SQLite on CI, where the embedded quickstart and the production deployment each run them."""

from __future__ import annotations

import pytest
from django.conf import settings

from evalhub.tallies.models import BATTLE_COUNTS, BATTLE_KEY, BattleCount
from evalhub.tallies.sql import ROWS_PER_STATEMENT, placeholders, select, table, upsert

pytestmark = pytest.mark.django_db(databases="__all__")


@pytest.fixture(params=sorted(settings.DATABASES))
def alias(request):
    return request.param


def key(n: int) -> tuple[str, ...]:
    return (f"model-{n}", "model-x", "consensus", "helpfulness", "math", "demo", "original")


def counts(alias: str) -> dict[tuple, tuple[int, int, int]]:
    return {
        tuple(row[: len(BATTLE_KEY)]): tuple(row[len(BATTLE_KEY) :])
        for row in BattleCount.objects.using(alias).values_list(*BATTLE_KEY, *BATTLE_COUNTS)
    }


def test_adding_creates_the_rows_not_there_and_adds_to_those_that_are(alias):
    BattleCount.objects.using(alias).create(**dict(zip(BATTLE_KEY, key(0), strict=True)), wins_a=5, wins_b=1, ties=2)
    upsert(BattleCount, BATTLE_KEY, BATTLE_COUNTS, [(*key(0), 1, 0, -1), (*key(1), 0, 3, 0)], add=True, using=alias)
    assert counts(alias) == {key(0): (6, 1, 1), key(1): (0, 3, 0)}


def test_replacing_overwrites_the_values_and_keeps_one_row_per_key(alias):
    upsert(BattleCount, BATTLE_KEY, BATTLE_COUNTS, [(*key(0), 4, 4, 4)], add=False, using=alias)
    upsert(BattleCount, BATTLE_KEY, BATTLE_COUNTS, [(*key(0), 1, 2, 3)], add=False, using=alias)
    assert counts(alias) == {key(0): (1, 2, 3)}


def test_more_rows_than_one_statement_holds_are_all_written(alias):
    rows = [(*key(n), n, 1, 0) for n in range(2 * ROWS_PER_STATEMENT + 7)]
    upsert(BattleCount, BATTLE_KEY, BATTLE_COUNTS, rows, add=True, using=alias)
    upsert(BattleCount, BATTLE_KEY, BATTLE_COUNTS, rows, add=True, using=alias)
    assert counts(alias) == {tuple(row[:7]): (2 * row[7], 2, 0) for row in rows}


def test_a_select_reads_plain_rows_by_an_in_list(alias):
    upsert(BattleCount, BATTLE_KEY, BATTLE_COUNTS, [(*key(n), n, 0, 0) for n in range(5)], add=False, using=alias)
    wanted = ["model-1", "model-3"]
    sql = f"SELECT model_a, wins_a FROM {table(BattleCount, alias)} WHERE model_a IN ({placeholders(wanted)})"
    assert sorted(select(sql, wanted, using=alias)) == [("model-1", 1), ("model-3", 3)]
