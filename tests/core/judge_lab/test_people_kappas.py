"""The people's kappas with each other: every two people who share enough pairs, and only those."""

from __future__ import annotations

import numpy as np
import pytest

from evalhub.core.judge_lab import report
from evalhub.core.judge_lab.measures import ABSENT, MIN_SHARED, NO_VERDICT


def every_two(people: list[str], dense: dict[str, np.ndarray]) -> dict[tuple[str, str], float]:
    """The definition, as the report computed it before: every two people, in order."""
    values = {}
    for i, a in enumerate(people):
        for b in people[i + 1 :]:
            value = report._pair_kappa(np.where(dense[a] == NO_VERDICT, ABSENT, dense[a]), dense[b])
            if value is not None:
                values[tuple(sorted((a, b)))] = value
    return values


def kappas(pairs) -> dict[tuple[str, str], float]:
    return {(pair.first, pair.second): pair.kappa for pair in pairs if pair.kappa is not None}


@pytest.mark.parametrize("seed", range(6))
def test_the_kappas_of_people_who_share_enough_pairs_equal_every_two_compared(seed):
    """A guard: people who answered many pairs, few, or none in common, with answers without a verdict."""
    rng = np.random.default_rng(seed)
    pairs, people = 60, [f"p{n}" for n in range(14)]
    dense = {}
    for n, person in enumerate(people):
        answered = rng.random(pairs) < (0.9 if n % 3 == 0 else 0.1 if n % 3 == 1 else 0.02)
        picks = rng.choice([0, 1, 2, NO_VERDICT], size=pairs, p=[0.4, 0.3, 0.2, 0.1]).astype(np.int8)
        dense[person] = np.where(answered, picks, ABSENT).astype(np.int8)
    expected = every_two(people, dense)
    assert len(expected) > 3, "some people share enough pairs"
    found = report._people_kappas(people, dense)
    assert kappas(found) == expected
    assert [(pair.first, pair.second) for pair in found] == sorted((pair.first, pair.second) for pair in found)


def test_a_crowd_that_shares_no_pairs_is_not_compared_two_by_two(monkeypatch):
    """Arena's voters are people who vote once or a few times: every two of a thousand were compared
    (499,500 kappas' worth of work, 7 CPU-s), though none shared a pair."""
    compared = []
    pair_kappa = report._pair_kappa
    monkeypatch.setattr(report, "_pair_kappa", lambda a, b, *rest: compared.append(1) or pair_kappa(a, b, *rest))
    people = [f"voter-{n}" for n in range(300)]
    dense = {person: np.full(300, ABSENT, dtype=np.int8) for person in people}
    for n, person in enumerate(people):
        dense[person][n] = n % 3
    close = [f"study-{n}" for n in range(2)]  # two people who answered the same pairs
    for person in close:
        dense[person] = np.full(300, ABSENT, dtype=np.int8)
        dense[person][: MIN_SHARED + 2] = [0, 1, 2, 0, 1, 2, 0]
    (pair,) = report._people_kappas(people + close, dense)
    assert (pair.first, pair.second, pair.pairs, pair.kappa) == ("study-0", "study-1", MIN_SHARED + 2, 1.0)
    assert len(compared) == 1
