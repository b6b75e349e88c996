"""Two versions of a judge on the same held-out pairs: the paired difference in agreement and κ, checked
against an ordinary paired cluster bootstrap written here, on planted cases where the answer is known."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evalhub.core.alignment.paired import AGREEMENT, KAPPA, paired_differences
from evalhub.core.judge_lab.measures import FIRST, NO_VERDICT, SECOND, TIE


def planted(prompts: int = 120, per_prompt: int = 3, before: float = 0.6, after: float = 0.85, seed: int = 0):
    """People's verdicts on pairs of `prompts` prompts; the first version right with chance `before`, the
    second with chance `after`, prompt by prompt (a hard prompt is hard for both)."""
    rng = np.random.default_rng(seed)
    prompt = np.repeat(np.arange(prompts), per_prompt)
    people = rng.choice([FIRST, SECOND, TIE], size=len(prompt), p=[0.45, 0.45, 0.1])
    difficulty = rng.uniform(-0.15, 0.15, prompts)[prompt]
    draws = rng.uniform(size=len(prompt))

    def version(chance: float) -> np.ndarray:
        wrong = np.where(people == FIRST, SECOND, FIRST)
        return np.where(draws < chance + difficulty, people, wrong)

    return people, version(before), version(after), prompt


def ordinary_paired_bootstrap(people, before, after, prompt, resamples: int, seed: int):
    """Prompts drawn with replacement (multinomial), the same draw for both versions."""
    rng = np.random.default_rng(seed)
    keys = np.unique(prompt)
    members = {key: np.flatnonzero(prompt == key) for key in keys}
    agreement, kappa = [], []
    for _ in range(resamples):
        rows = np.concatenate([members[key] for key in rng.choice(keys, size=len(keys))])
        p, b, a = people[rows], before[rows], after[rows]
        agreement.append((a == p).mean() - (b == p).mean())
        kappa.append(cohen_kappa_score(p, a) - cohen_kappa_score(p, b))
    return np.percentile(agreement, [2.5, 97.5]), np.percentile(kappa, [2.5, 97.5])


def test_the_differences_equal_the_plain_figures_and_an_ordinary_paired_bootstrap():
    people, before, after, prompt = planted()
    found = paired_differences(people, before, after, prompt, resamples=4000, seed=1)
    agreement, kappa = found[AGREEMENT], found[KAPPA]
    assert agreement.before == pytest.approx((before == people).mean(), abs=1e-12)
    assert agreement.difference == pytest.approx((after == people).mean() - (before == people).mean(), abs=1e-12)
    assert kappa.difference == pytest.approx(
        cohen_kappa_score(people, after) - cohen_kappa_score(people, before), abs=1e-12
    )
    assert (agreement.pairs, agreement.prompts) == (360, 120)
    ordinary_agreement, ordinary_kappa = ordinary_paired_bootstrap(people, before, after, prompt, 2000, seed=2)
    assert [agreement.low, agreement.high] == pytest.approx(list(ordinary_agreement), abs=0.015)
    assert [kappa.low, kappa.high] == pytest.approx(list(ordinary_kappa), abs=0.025)


def test_a_real_gain_excludes_zero_and_no_gain_covers_it():
    people, before, after, prompt = planted()
    gain = paired_differences(people, before, after, prompt)
    assert gain[AGREEMENT].low > 0
    assert not gain[AGREEMENT].no_change
    same = paired_differences(people, before, before.copy(), prompt)
    assert (same[AGREEMENT].difference, same[AGREEMENT].low, same[AGREEMENT].high) == (0.0, 0.0, 0.0)
    assert same[AGREEMENT].no_change


def test_pairing_makes_the_interval_narrower_than_the_versions_apart():
    """A prompt hard for one version is hard for the other: the shared part cancels in the difference."""
    people, before, after, prompt = planted()
    paired = paired_differences(people, before, after, prompt)[AGREEMENT]
    shuffled = np.random.default_rng(5).permutation(len(after))  # the second version's errors unpaired
    unpaired = paired_differences(people[shuffled], before[shuffled], after, prompt)[AGREEMENT]
    assert paired.high - paired.low < unpaired.high - unpaired.low


def test_a_missing_verdict_counts_against_its_version_and_few_prompts_get_no_interval():
    people = np.array([FIRST, SECOND, FIRST, TIE])
    before = np.array([FIRST, SECOND, NO_VERDICT, TIE])
    after = np.array([FIRST, SECOND, FIRST, TIE])
    found = paired_differences(people, before, after, ["p1", "p2", "p3", "p4"])[AGREEMENT]
    assert (found.before, found.after, found.difference) == (0.75, 1.0, 0.25)
    assert (found.low, found.high, found.no_change) == (None, None, True)
    with pytest.raises(ValueError, match="same pairs"):
        paired_differences(people, before, after[:3], ["p1", "p2", "p3", "p4"])


def test_a_rate_with_its_own_denominator_per_version_equals_the_direct_rates_and_an_ordinary_bootstrap():
    from evalhub.core.alignment.paired import paired_rate_differences

    rng = np.random.default_rng(3)
    prompt = np.repeat(np.arange(80), 2)
    counted_before = rng.uniform(size=160) < 0.9
    counted_after = rng.uniform(size=160) < 0.8
    hits_before = counted_before & (rng.uniform(size=160) < 0.5)
    hits_after = counted_after & (rng.uniform(size=160) < 0.75)
    found = paired_rate_differences(
        {"rate": (hits_before, counted_before, hits_after, counted_after)}, prompt, resamples=4000, seed=1
    )["rate"]
    assert found.before == pytest.approx(hits_before.sum() / counted_before.sum(), abs=1e-12)
    assert found.difference == pytest.approx(
        hits_after.sum() / counted_after.sum() - hits_before.sum() / counted_before.sum(), abs=1e-12
    )
    assert found.pairs == int((counted_before & counted_after).sum())
    draws = np.random.default_rng(2)
    differences = []
    for _ in range(2000):
        rows = np.concatenate([np.flatnonzero(prompt == key) for key in draws.choice(80, size=80)])
        differences.append(
            hits_after[rows].sum() / counted_after[rows].sum() - hits_before[rows].sum() / counted_before[rows].sum()
        )
    assert [found.low, found.high] == pytest.approx(list(np.percentile(differences, [2.5, 97.5])), abs=0.02)
