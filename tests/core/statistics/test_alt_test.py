"""The alt-test (Calderon, Reichart & Dror, ACL 2025) against an independent implementation written here
from the paper's formulas, on planted cases: a judge that copies the people's majority passes; a judge
with a person's own noise does not at epsilon 0; the tests and the adjustment are scipy's."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from scipy import stats

from evalhub.core.statistics.alt_test import CATEGORICAL, NUMERIC, alt_test


def people_and_truth(n_people: int, n_items: int, noise: float, seed: int, labels=(1, 2, 0)):
    rng = random.Random(seed)
    truth = {f"i{n}": rng.choice(labels) for n in range(n_items)}
    people = {
        f"p{k}": {item: (rng.choice(labels) if rng.random() < noise else label) for item, label in truth.items()}
        for k in range(n_people)
    }
    return people, truth


def majority(people, item):
    votes = [labels[item] for labels in people.values() if item in labels]
    return max(sorted(set(votes)), key=votes.count)


def by_adjusted(ps):
    """Benjamini–Yekutieli, written out: p_(i) m c(m) / i, made monotone from the largest, capped at 1."""
    m = len(ps)
    c = sum(1 / k for k in range(1, m + 1))
    order = sorted(range(m), key=lambda i: ps[i])
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, ps[i] * m * c / rank)
        adjusted[i] = min(running, 1.0)
    return adjusted


def independent(people, judge, epsilon, kind):
    """rho_f, rho_h and p per person, one item at a time, as the paper states them."""
    out = {}
    for person, own in people.items():
        wf, wh = [], []
        for item, value in own.items():
            others = [labels[item] for other, labels in people.items() if other != person and item in labels]
            if not others or item not in judge:
                continue
            if kind == CATEGORICAL:
                s_f = np.mean([judge[item] == o for o in others])
                s_h = np.mean([value == o for o in others])
            else:
                s_f = -math.sqrt(np.mean([(judge[item] - o) ** 2 for o in others]))
                s_h = -math.sqrt(np.mean([(value - o) ** 2 for o in others]))
            wf.append(int(s_f >= s_h))
            wh.append(int(s_h >= s_f))
        d = np.array(wh) - np.array(wf)
        if len(d) >= 30:
            p = (
                1.0
                if np.all(d == d[0]) and d[0] >= epsilon
                else stats.ttest_1samp(d, epsilon, alternative="less").pvalue
            )
        else:
            p = stats.wilcoxon(d - epsilon, alternative="less").pvalue
        out[person] = (np.mean(wf), np.mean(wh), float(p))
    return out


def test_a_judge_that_copies_the_peoples_majority_may_replace_them():
    people, _truth = people_and_truth(5, 80, noise=0.35, seed=1)
    judge = {item: majority(people, item) for item in next(iter(people.values()))}
    result = alt_test(people, judge, epsilon=0.2)
    assert result.passes and result.winning_rate == 1.0
    assert result.verdict == "may replace these people at ε = 0.2"
    assert all(t.test == "t" and t.items == 80 for t in result.people)


def test_a_judge_with_a_persons_own_noise_may_not_replace_them_at_epsilon_zero():
    people, truth = people_and_truth(5, 80, noise=0.35, seed=2)
    rng = random.Random(9)
    judge = {item: (rng.choice((1, 2, 0)) if rng.random() < 0.35 else label) for item, label in truth.items()}
    result = alt_test(people, judge, epsilon=0.0)
    assert not result.passes and result.winning_rate < 0.5
    assert result.verdict.startswith("may not replace")


@pytest.mark.parametrize("n_items", [80, 20])  # Student's t from 30 items, Wilcoxon's below
@pytest.mark.parametrize("kind", [CATEGORICAL, NUMERIC])
def test_every_figure_equals_the_independent_implementation(n_items, kind):
    labels = (1, 2, 0) if kind == CATEGORICAL else (1, 2, 3, 4, 5)
    people, truth = people_and_truth(4, n_items, noise=0.4, seed=3, labels=labels)
    people["p3"] = {item: v for n, (item, v) in enumerate(people["p3"].items()) if n % 4}  # a person who skipped some
    rng = random.Random(4)
    judge = {item: (rng.choice(labels) if rng.random() < 0.3 else label) for item, label in truth.items()}
    result = alt_test(people, judge, epsilon=0.15, kind=kind)
    expected = independent(people, judge, 0.15, kind)
    adjusted = dict(zip(expected, by_adjusted([p for _, _, p in expected.values()]), strict=True))
    for test in result.people:
        rho_f, rho_h, p = expected[test.person]
        assert test.rho_judge == pytest.approx(rho_f) and test.rho_person == pytest.approx(rho_h)
        assert test.p == pytest.approx(p) and test.p_adjusted == pytest.approx(adjusted[test.person])
        assert test.test == ("t" if test.items >= 30 else "wilcoxon")
        assert test.judge_wins == (adjusted[test.person] <= 0.05)
    assert result.advantage_probability == pytest.approx(np.mean([v[0] for v in expected.values()]))
    assert result.winning_rate == sum(t.judge_wins for t in result.people) / 4


def test_too_few_people_or_items_say_so_and_draw_nothing():
    assert alt_test({"p0": {"a": 1}}, {"a": 1}).verdict.startswith("too few people")
    few = {"p0": {"a": 1, "b": 2}, "p1": {"a": 1, "b": 1}}
    result = alt_test(few, {"a": 1, "b": 2})
    assert result.winning_rate is None and result.verdict.startswith("too few items")
    assert all(t.p is None for t in result.people)


def test_ranked_labels_are_compared_by_each_raters_ranks_only():
    from evalhub.core.statistics.alt_test import RANKED

    people, truth = people_and_truth(3, 40, noise=0.3, seed=5, labels=(1, 2, 3, 4, 5))
    judge = {item: 10 * value + 7 for item, value in truth.items()}  # another scale, the same order

    def ranked(labels):
        items = list(labels)
        return dict(zip(items, stats.rankdata([labels[i] for i in items]), strict=True))

    by_rank = alt_test(people, judge, epsilon=0.1, kind=RANKED)
    by_hand = alt_test({p: ranked(v) for p, v in people.items()}, ranked(judge), epsilon=0.1, kind=NUMERIC)
    assert by_rank.people == by_hand.people and by_rank.winning_rate == by_hand.winning_rate
    assert alt_test(people, judge, epsilon=0.1, kind=NUMERIC).advantage_probability < by_rank.advantage_probability
