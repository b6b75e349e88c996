"""Which rows repeat an earlier row's key, found from two hashes a row: as a dict of the keys says."""

from __future__ import annotations

import random
import tracemalloc

import pytest

from evalhub.core.files.seen_keys import SeenKeys


def repeats_by_dict(keys: list[tuple]) -> list[tuple[int, int]]:
    first: dict[tuple, int] = {}
    out = []
    for line, key in enumerate(keys, start=2):
        if key in first:
            out.append((line, first[key]))
        else:
            first[key] = line
    return out


@pytest.mark.parametrize("slice_", [1, 3, 1 << 20])
def test_the_repeats_are_those_a_dict_of_the_keys_finds(monkeypatch, slice_):
    monkeypatch.setattr(SeenKeys, "SLICE", slice_, raising=False)
    rng = random.Random(slice_)
    keys = [(f"p{rng.randrange(40)}", rng.choice("ab"), "", rng.randrange(3)) for _ in range(300)]
    keys += [("x", "y"), ("y", "x"), ("x", "y")]  # a key and its reverse are different keys
    seen = SeenKeys()
    for line, key in enumerate(keys, start=2):
        seen.add(key, line)
    assert seen.repeats() == repeats_by_dict(keys)


def test_no_rows_and_no_repeats_give_nothing():
    assert SeenKeys().repeats() == []
    seen = SeenKeys()
    for line in range(1000):
        seen.add((line,), line)
    assert seen.repeats() == []


def test_finding_the_repeats_of_many_rows_takes_a_few_bytes_a_row_more():
    """An argsort's order (8 bytes a row) beside the sorted hashes' copy (8) cost 16 bytes a row more
    while the repeats were found; the copy alone now, and a slice of rows at a time."""
    seen = SeenKeys()
    rows = 400_000
    for line in range(rows):
        seen.add((f"p{line}", "a", "b"), line)
    tracemalloc.start()
    try:
        assert seen.repeats() == []
        extra = tracemalloc.get_traced_memory()[1] / rows
    finally:
        tracemalloc.stop()
    assert extra < 12, f"{extra:.1f} bytes a row"
