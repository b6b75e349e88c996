"""What a judgment import keeps while it reads a file, in a few bytes a label (a file may hold ten
million): the labels already stored that the file's may repeat or change (`StoredLabels`), and the new
labels' battles it will count (`NewBattles`). Python objects per label cost about 300 bytes each. A
score import keeps the stored scores of its file's responses in a `StoredLabels` too. On PostgreSQL a
judgment import merges the labels it staged with the stored ones on the server instead
(`merge_staged_labels`)."""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import Any, NamedTuple

import numpy as np
from django.db import connection

from evalhub.catalog.models import Judgment
from evalhub.core.files.disk_map import DiskMap, key_of
from evalhub.core.files.judgments import BOTH_BAD, JudgmentRecord
from evalhub.core.files.spool import Spool
from evalhub.system.bounded_queries import in_slices

# A stored label's pair is kept as one 64-bit number, its two response ids side by side.
ID_BITS = 31


def pair_key(first: int, second: int) -> int:
    if first >> ID_BITS or second >> ID_BITS:
        raise OverflowError(f"response ids past 2^{ID_BITS} ({first}, {second}): a judgment import cannot key them")
    return first << 32 | second


def value_hash(verdict: Any, probability: Any, grade: Any, both_bad: bool, blind: Any, aid: str, rationale: str) -> int:
    """A label's values as one number: equal values give equal numbers; two different ones agree about
    once in 2^64 (an edit then read as no change)."""
    return hash((verdict, probability, grade, both_bad, blind, aid, rationale))


class StoredLabels:
    """Per judge and criterion, the stored labels' pairs (sorted), keys and value hashes."""

    def __init__(self) -> None:
        self.tables: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, np.ndarray]] = {}

    def load(self, judge: int, rows: Iterable[tuple[int, int, int, int, int]]) -> None:
        """One judge's stored labels: (criterion, first response, second response, key, value hash) each."""
        self.load_all((judge, *row) for row in rows)

    def load_all(self, rows: Iterable[tuple[int, int, int, int, int, int]]) -> None:
        """Stored labels of any judges: (judge, criterion, first response, second response, key, value
        hash) each (a score of one response: its second response 0)."""
        columns: dict[tuple[int, int], tuple[array, array, array]] = {}
        for judge, criterion, first, second, pk, values in rows:
            pairs, keys, hashes = columns.setdefault((judge, criterion), (array("q"), array("q"), array("q")))
            pairs.append(pair_key(first, second))
            keys.append(pk)
            hashes.append(values)
        while columns:  # each table's columns let go once sorted: the copies of all never beside them all
            table, (pairs, keys, hashes) = columns.popitem()
            order = np.argsort(np.frombuffer(pairs, dtype=np.int64), kind="stable")
            in_order = [np.frombuffer(column, dtype=np.int64)[order] for column in (pairs, keys, hashes)]
            self.tables[table] = (in_order[0], in_order[1], in_order[2])

    def find_all(self, wanted: Sequence[tuple[int, int, int, int]]) -> list[tuple[int, int] | None]:
        """Per (criterion, judge, first response, second response): (key, value hash) of its stored
        label, None if none; one sorted search per judge and criterion for the lot."""
        out: list[tuple[int, int] | None] = [None] * len(wanted)
        rows: dict[tuple[int, int], list[int]] = {}
        for i, (criterion, judge, _, _) in enumerate(wanted):
            if (judge, criterion) in self.tables:
                rows.setdefault((judge, criterion), []).append(i)
        for table, positions in rows.items():
            pairs, keys, hashes = self.tables[table]
            sought = np.fromiter((pair_key(wanted[i][2], wanted[i][3]) for i in positions), np.int64, len(positions))
            at = np.minimum(np.searchsorted(pairs, sought), len(pairs) - 1)
            hit = pairs[at] == sought
            found = np.flatnonzero(hit)
            for i, key, values in zip(found.tolist(), keys[at[hit]].tolist(), hashes[at[hit]].tolist(), strict=True):
                out[positions[i]] = (key, values)
        return out


class NewBattles:
    """The new labels' battles as they will be counted, in memory that does not grow with the file: each
    label's prompt and the rest of its battle (pair, kind of judge, criterion, verdict: few distinct) as
    two small codes, merged into counts by sorting every MERGE_EVERY labels. Past SPILL_AT prompts or
    merged counts, those counts go to disk (a Spool) with their prompts' ids and the codes start again:
    a file in the shape of Arena's votes names a new prompt a row, and their codes alone cost 0.5 GB at
    ten million (a label read back from a list of records, about 300 bytes: 3 GB)."""

    MERGE_EVERY = 1 << 20
    SPILL_AT = 1 << 18

    def __init__(self) -> None:
        self.battles: dict[tuple[str, str, bool, str, int | None], int] = {}
        self.spilled: Spool[tuple[str, int, int]] = Spool(tuple[str, int, int])  # (prompt id, battle, labels)
        self.labels = 0
        self._start()

    def _start(self) -> None:
        self.prompts: dict[str, int] = {}
        self.prompt_codes, self.battle_codes = array("q"), array("q")
        self.merged = np.zeros((0, 3), dtype=np.int64)  # (prompt code, battle code, labels)

    def add(self, record: JudgmentRecord, verdict: int | None) -> None:
        prompt = self.prompts.setdefault(record.prompt_id, len(self.prompts))
        battle = (record.model_a, record.model_b, record.judge_is_human, record.criterion, verdict)
        self.prompt_codes.append(prompt)
        self.battle_codes.append(self.battles.setdefault(battle, len(self.battles)))
        self.labels += 1
        if len(self.prompt_codes) >= self.MERGE_EVERY or len(self.prompts) >= self.SPILL_AT:
            self._merge()
            if len(self.merged) >= self.SPILL_AT or len(self.prompts) >= self.SPILL_AT:
                self._spill()

    def _merge(self) -> None:
        fresh = np.column_stack(
            [
                np.frombuffer(self.prompt_codes, dtype=np.int64),
                np.frombuffer(self.battle_codes, dtype=np.int64),
                np.ones(len(self.prompt_codes), dtype=np.int64),
            ]
        )
        rows = np.concatenate([self.merged, fresh])
        key = rows[:, 0] * max(len(self.battles), 1) + rows[:, 1]
        kinds, first, where = np.unique(key, return_index=True, return_inverse=True)
        self.merged = np.column_stack([rows[first, 0], rows[first, 1], np.bincount(where.ravel(), weights=rows[:, 2])])
        self.merged = self.merged.astype(np.int64)
        self.prompt_codes, self.battle_codes = array("q"), array("q")

    def _spill(self) -> None:
        for prompt, battle, many in self._named():
            self.spilled.add((prompt, battle, many))
        self._start()

    def _named(self) -> Iterator[tuple[str, int, int]]:
        """The merged counts with their prompts' ids, a slice at a time (a list of them all: 100 bytes each)."""
        prompts = list(self.prompts)
        for at in range(0, len(self.merged), 1 << 16):
            for prompt, battle, many in self.merged[at : at + (1 << 16)].tolist():
                yield prompts[prompt], battle, many

    def counted(self) -> Iterator[tuple[tuple[str, str, str, bool, str, int | None], int]]:
        """((prompt id, model a, model b, a person judged, criterion, verdict), labels) per kind; a kind
        counted on both sides of a spill comes twice, its labels split."""
        self._merge()
        battles = list(self.battles)
        for prompt, battle, many in itertools.chain(self.spilled, self._named()):
            yield (prompt, *battles[battle]), many

    def close(self) -> None:
        self.spilled.close()


KEY_COLUMNS = ("criterion_id", "judge_model_id", "response_id", "response_2_id", "prompt_variant")
VALUE_COLUMNS = ("verdict", "probability", "grade", "blind_verdict", "aid", "rationale")
ARENA_WINNER = "arena_winner"  # a label's metadata key for Arena's winner where it says more than the verdict


COUNTED_AT_A_TIME = 100_000  # labels' ids read back a query, to count a merge's changed and new labels


def merge_staged_labels(staged: str, count: Callable[[Collection[int], int], None]) -> tuple[int, int, int]:
    """Labels staged in a temporary table shaped as the judgments' (RowWriter staged=True) merged with the
    stored ones by the server (PostgreSQL): the changed ones updated in place, their counts taken away and
    added again (`count`: do_count_imported), the new ones inserted in the file's order and counted, the
    rest left as they are. Values compare as `value_hash` does, Arena's both-bad as a boolean. Reading
    the stored labels back to compare them cost an unchanged re-import 1.17x the first import's CPU. The
    changed and new labels' ids stay on the server, in temporary tables, and are counted
    COUNTED_AT_A_TIME at a time (all of them in a list cost about 100 bytes a label, twice: 2 GB for ten
    million new votes). Returns (changed, new, staged) labels."""
    quote = connection.ops.quote_name
    judgments = quote(Judgment._meta.db_table)
    key = " AND ".join(f"j.{quote(c)} = s.{quote(c)}" for c in KEY_COLUMNS)
    both_bad = "COALESCE({}.metadata ->> %s = %s, false)"
    stored_values = ", ".join([*(f"j.{quote(c)}" for c in VALUE_COLUMNS), both_bad.format("j")])
    staged_values = ", ".join([*(f"s.{quote(c)}" for c in VALUE_COLUMNS), both_bad.format("s")])
    columns = ", ".join(quote(f.column) for f in Judgment._meta.concrete_fields if not f.primary_key)
    changed_ids, created_ids = f"{staged}_changed", f"{staged}_created"
    with connection.cursor() as cursor:
        for ids in (changed_ids, created_ids):  # keyed: read back a slice at a time in order
            cursor.execute(f"CREATE TEMP TABLE {ids} (id bigint PRIMARY KEY) ON COMMIT DROP")
        cursor.execute(
            f"INSERT INTO {changed_ids} SELECT j.id FROM {staged} s JOIN {judgments} j "
            f"ON {key} WHERE ({stored_values}) IS DISTINCT FROM ({staged_values})",
            [ARENA_WINNER, BOTH_BAD, ARENA_WINNER, BOTH_BAD],
        )
        changed = cursor.rowcount
        cursor.execute(f"SELECT count(*) FROM {staged}")
        staged_count = cursor.fetchone()[0]
        if changed:
            _count_ids(cursor, changed_ids, count, -1)
            updated = ", ".join(f"{quote(c)} = s.{quote(c)}" for c in (*VALUE_COLUMNS, "metadata"))
            cursor.execute(
                f"UPDATE {judgments} j SET {updated} FROM {staged} s "
                f"WHERE j.id IN (SELECT id FROM {changed_ids}) AND {key}"
            )
            _count_ids(cursor, changed_ids, count, 1)
        cursor.execute(
            f"WITH inserted AS (INSERT INTO {judgments} ({columns}) SELECT {columns} FROM {staged} s "
            f"WHERE NOT EXISTS (SELECT 1 FROM {judgments} j WHERE {key}) ORDER BY s.id RETURNING id) "
            f"INSERT INTO {created_ids} SELECT id FROM inserted"
        )
        created = cursor.rowcount
        _count_ids(cursor, created_ids, count, 1)
    return changed, created, staged_count


def _count_ids(cursor: Any, table: str, count: Callable[[Collection[int], int], None], sign: int) -> None:
    """`count` the labels whose ids `table` holds, COUNTED_AT_A_TIME at a time, in the order of their ids."""
    last = -1
    while True:
        cursor.execute(f"SELECT id FROM {table} WHERE id > %s ORDER BY id LIMIT %s", [last, COUNTED_AT_A_TIME])
        ids = [row[0] for row in cursor.fetchall()]
        if not ids:
            return
        count(ids, sign)
        last = ids[-1]


class ResponseId(NamedTuple):
    id: int
    new: bool  # its key reserved by this import: the response is written after the labels


class ResponseIds:
    """The response each (prompt id in the file, model slug, variant) of a labels file points to: the
    benchmark's stored ones and those this import reserved a key for. On disk (DiskMap) behind a cache of
    the last CACHE_SIZE, not in dicts: a file in the shape of Arena's votes names two new responses a row,
    which cost about 800 bytes a vote. A model's one response to a prompt (variant "", nearly all) is
    keyed by the prompt and model alone."""

    CACHE_SIZE = 1 << 17

    def __init__(self, stored: Iterable[tuple[int, str, str, str]]) -> None:
        self.ids: DiskMap[ResponseId] = DiskMap(ResponseId)
        for part in in_slices(stored, 10_000):
            self.ids.put_many(
                (_key(prompt, model, variant), ResponseId(pk, False)) for pk, prompt, model, variant in part
            )
        self.recent: dict[tuple[str, str, str], int] = {}
        self.unwritten: dict[str, ResponseId] = {}  # new since the cache was last cleared: all in `recent`
        self.created = 0

    def get(self, prompt: str, model: str, variant: str = "") -> int | None:
        found = self.recent.get((prompt, model, variant))
        if found is None and (stored := self.ids.get(_key(prompt, model, variant))) is not None:
            found = stored.id
            self._remember((prompt, model, variant), found)
        return found

    def add_new(self, prompt: str, model: str, variant: str, pk: int) -> None:
        self.created += 1
        self._remember((prompt, model, variant), pk)
        self.unwritten[_key(prompt, model, variant)] = ResponseId(pk, True)

    def _remember(self, key: tuple[str, str, str], pk: int) -> None:
        if len(self.recent) >= self.CACHE_SIZE:
            self._write()
            self.recent.clear()
        self.recent[key] = pk

    def _write(self) -> None:
        self.ids.put_many(self.unwritten.items())
        self.unwritten.clear()

    def close(self) -> None:
        self.ids.close()

    def held(self, keys: Collection[tuple[str, str, str]]) -> set[tuple[str, str, str]]:
        """Those of `keys` the benchmark held before this import (asking the database while a COPY runs
        would wait for it forever: these are read once, up front)."""
        self._write()
        found = self.ids.get_many({_key(*key) for key in keys})
        return {key for key in keys if (name := _key(*key)) in found and not found[name].new}

    def new_ones(self, keys: Collection[tuple[str, str, str]]) -> dict[tuple[str, str, str], int]:
        """The keys this import reserved among those of `keys` (prompt id, model slug, variant)."""
        self._write()
        found = self.ids.get_many({_key(*key) for key in keys})
        return {key: found[name].id for key in keys if (name := _key(*key)) in found and found[name].new}


def _key(prompt: str, model: str, variant: str) -> str:
    return key_of(prompt, model, variant) if variant else key_of(prompt, model)
