"""The aids' assignment and their measured effect, each figure against an independent computation
(statsmodels' Wilson interval, scikit-learn's κ with resampling weights, a bootstrap written out)."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.proportion import proportion_confint

from evalhub.core.scaleeval.aids import (
    AIDS,
    CRITIQUE,
    DEBATE,
    NO_AID,
    RevealedVerdict,
    aid_effect,
    aid_effects,
    aid_for,
    critic_of,
    majority,
)

RESAMPLES = 300  # fewer than the pages' 1,000: the independent computation below is a slow loop


def test_every_block_of_items_holds_each_aid_once_and_the_seed_replays_it():
    seen = [aid_for(7, person=3, position=p, aids=AIDS) for p in range(30)]
    assert Counter(seen) == {aid: 10 for aid in AIDS}
    for block in range(10):
        assert sorted(seen[3 * block : 3 * block + 3]) == sorted(AIDS)
    assert seen == [aid_for(7, 3, p, AIDS) for p in range(30)]
    assert seen != [aid_for(8, 3, p, AIDS) for p in range(30)], "another seed, another order"
    assert seen != [aid_for(7, 4, p, AIDS) for p in range(30)], "another person, another order"
    assert {aid_for(1, 1, p, [DEBATE]) for p in range(5)} == {DEBATE}
    with pytest.raises(ValueError):
        aid_for(1, 1, 0, [])


def test_the_critic_is_drawn_from_the_seed_among_the_speakers():
    assert critic_of(3, 11, [1, 2, 3]) == critic_of(3, 11, [3, 2, 1])
    assert {critic_of(3, item, [1, 2, 3]) for item in range(40)} == {1, 2, 3}


def test_the_agents_majority_needs_more_than_half_of_the_valid_verdicts():
    assert majority([1, 1, 2]) == 1
    assert majority([1, 2, 0]) is None
    assert majority([1, None, None]) == 1
    assert majority([1, 2]) is None
    assert majority([None]) is None


def planted(kind: str, items: int = 60, seed: int = 0) -> list[RevealedVerdict]:
    """Two people per item. Blind verdicts agree with the agents at chance; after the reveal people
    either copy the agents (most of the time) or change at random, as often, ignoring them."""
    rng = np.random.default_rng(seed)
    rows = []
    for item in range(items):
        agents = int(rng.integers(0, 3))
        gold = agents if rng.uniform() < 0.7 else int(rng.integers(0, 3))
        for _ in range(2):
            blind = int(rng.integers(0, 3))
            if kind == "copy":
                revealed = agents if rng.uniform() < 0.8 else blind
            else:
                revealed = int(rng.integers(0, 3)) if rng.uniform() < 0.5 else blind
            rows.append(
                RevealedVerdict(item=item, aid=DEBATE, blind=blind, revealed=revealed, agents=agents, gold=gold)
            )
    return rows


def independent_paired_bootstrap(rows, statistic, resamples=RESAMPLES, seed=0):
    """Items drawn with replacement (each item's rows together), written out as a reader would."""
    items = list(dict.fromkeys(row.item for row in rows))
    rng = np.random.default_rng(seed)
    estimates = []
    for _ in range(resamples):
        drawn = rng.integers(0, len(items), size=len(items))
        times = np.bincount(drawn, minlength=len(items))
        weights = np.array([times[items.index(row.item)] for row in rows], dtype=float)
        estimates.append(statistic(rows, weights))
    return np.percentile(estimates, [2.5, 97.5])


def kappa_change(rows, weights):
    agents = [row.agents for row in rows]
    after = cohen_kappa_score(agents, [row.revealed for row in rows], sample_weight=weights)
    before = cohen_kappa_score(agents, [row.blind for row in rows], sample_weight=weights)
    return after - before


def accuracy_change(rows, weights):
    change = np.array([(row.revealed == row.gold) - (row.blind == row.gold) for row in rows], dtype=float)
    return float((weights * change).sum() / weights.sum())


def test_people_who_copy_the_agents_show_an_inflation_clearly_above_zero_equal_to_an_independent_computation():
    rows = planted("copy")
    effect = aid_effect(DEBATE, rows, resamples=RESAMPLES)
    ones = np.ones(len(rows))
    assert effect.inflation.value == pytest.approx(kappa_change(rows, ones), abs=1e-12)
    assert effect.kappa_revealed - effect.kappa_blind == pytest.approx(effect.inflation.value, abs=1e-12)
    low, high = independent_paired_bootstrap(rows, kappa_change)
    assert (effect.inflation.low, effect.inflation.high) == pytest.approx((low, high), abs=1e-12)
    assert effect.inflation.low > 0.3, "copying the agents inflates their measured agreement"


def test_people_who_ignore_the_agents_show_an_inflation_whose_interval_covers_zero():
    rows = planted("ignore")
    effect = aid_effect(DEBATE, rows, resamples=RESAMPLES)
    low, high = independent_paired_bootstrap(rows, kappa_change)
    assert (effect.inflation.low, effect.inflation.high) == pytest.approx((low, high), abs=1e-12)
    assert effect.inflation.low < 0 < effect.inflation.high
    assert effect.flipped > 20, "people did change their minds, at random"


def test_flip_rate_share_toward_the_agents_and_accuracy_equal_independent_computations():
    rows = planted("copy")
    effect = aid_effect(DEBATE, rows, resamples=RESAMPLES)
    flips = [row for row in rows if row.revealed != row.blind]
    assert (effect.flipped, effect.verdicts, effect.items) == (len(flips), 120, 60)
    low, high = proportion_confint(len(flips), len(rows), alpha=0.05, method="wilson")
    assert (effect.flips.value, effect.flips.low, effect.flips.high) == pytest.approx(
        (len(flips) / len(rows), low, high), abs=1e-12
    )
    toward = sum(row.revealed == row.agents for row in flips)
    low, high = proportion_confint(toward, len(flips), alpha=0.05, method="wilson")
    assert (effect.toward_agents.value, effect.toward_agents.low, effect.toward_agents.high) == pytest.approx(
        (toward / len(flips), low, high), abs=1e-12
    )
    assert effect.toward_agents.value == 1.0, "every flip in the planted copy case goes to the agents"
    hits = sum(row.blind == row.gold for row in rows)
    low, high = proportion_confint(hits, len(rows), alpha=0.05, method="wilson")
    assert (effect.accuracy_blind.value, effect.accuracy_blind.low) == pytest.approx((hits / len(rows), low))
    ones = np.ones(len(rows))
    assert effect.accuracy_change.value == pytest.approx(accuracy_change(rows, ones), abs=1e-12)
    low, high = independent_paired_bootstrap(rows, accuracy_change)
    assert (effect.accuracy_change.low, effect.accuracy_change.high) == pytest.approx((low, high), abs=1e-12)
    assert effect.accuracy_change.low > 0, "the agents are mostly right here, so copying them helps"


def test_below_ten_items_a_figure_shows_its_value_and_no_interval():
    rows = planted("copy", items=9)
    effect = aid_effect(DEBATE, rows, resamples=RESAMPLES)
    assert effect.flips.value is not None and effect.flips.low is None
    assert effect.inflation.value is not None and effect.inflation.low is None
    assert effect.accuracy_change.low is None


def test_effects_are_given_per_aid_in_a_fixed_order():
    rows = planted("copy", items=12)
    rows = [RevealedVerdict(**{**row.__dict__, "aid": (NO_AID, CRITIQUE)[i % 2]}) for i, row in enumerate(rows)]
    assert [effect.aid for effect in aid_effects(rows)] == [CRITIQUE, NO_AID]
    assert aid_effects([]) == []


def test_a_judgment_file_names_the_same_aids():
    from evalhub.core.files import judgments

    assert judgments.AIDS == AIDS
