"""Integer keys as runs of consecutive keys: the same keys as a set, in a few bytes however many."""

from __future__ import annotations

import random

import pytest

from evalhub.core.files.key_runs import KeyRuns


def covered(runs: KeyRuns, most: int) -> list[int]:
    keys = []
    for firsts, lasts in runs.runs(most):
        assert sum(last - first + 1 for first, last in zip(firsts, lasts, strict=True)) <= most
        keys.extend(key for first, last in zip(firsts, lasts, strict=True) for key in range(first, last + 1))
    return keys


@pytest.mark.parametrize("fold_every", [1, 3, 1 << 16])
@pytest.mark.parametrize("most", [1, 2, 7, 100_000])
def test_the_runs_cover_each_key_added_once_in_order(monkeypatch, fold_every, most):
    monkeypatch.setattr(KeyRuns, "FOLD_EVERY", fold_every)
    rng = random.Random(fold_every * 1000 + most)
    keys = [*range(50, 80), *rng.sample(range(-20, 400), 120), 80, 49, 2**40, 2**40 + 1, -(2**40)]
    rng.shuffle(keys)
    runs = KeyRuns()
    for start in range(0, len(keys), 9):
        runs.add_all(keys[start : start + 9] * 2)  # repeated keys count once
    assert covered(runs, most) == sorted(set(keys))
    assert len(runs) == len(set(keys))


def test_no_keys_make_no_runs():
    assert list(KeyRuns().runs(10)) == [] and len(KeyRuns()) == 0


def test_keys_reserved_in_blocks_fold_into_a_few_runs_whatever_their_number(monkeypatch):
    """A labels file's two responses a row, reserved from a sequence a block at a time and met
    alternately, are a handful of runs: 16 bytes each, where a set held 70 bytes a key."""
    monkeypatch.setattr(KeyRuns, "FOLD_EVERY", 1000)
    runs = KeyRuns()
    for block in range(0, 200_000, 4096):
        runs.add_all(range(block + 1, block + 4096, 2))
        runs.add_all(range(block + 2, block + 4097, 2))
    runs.add_all(range(500_000, 500_010))
    assert len(runs) == 200_704 + 10
    assert (runs.firsts.tolist(), runs.lasts.tolist()) == ([1, 500_000], [200_704, 500_009])
    assert [len(firsts) for firsts, _ in runs.runs(100_000)] == [1, 1, 2]
