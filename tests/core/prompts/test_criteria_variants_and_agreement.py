"""Criteria variants and agreement metrics, against hand-computed values."""

from __future__ import annotations

import pytest

from evalhub.core.prompts.builtin_criteria import BUILTIN_CRITERIA
from evalhub.core.prompts.criteria_variants import criteria_variant
from evalhub.core.statistics.agreement import (
    by_group,
    example_agreement,
    mode,
    position_flip_rate,
    system_agreement,
    unswap,
)

LEVELS = BUILTIN_CRITERIA["helpfulness"]["levels"]


def test_shortened_drops_only_the_labels():
    short = criteria_variant(LEVELS, "shortened")
    assert short["1"] == (
        "The response is completely unrelated, lacks coherence, and fails to provide any meaningful information."
    )
    assert all(LEVELS[k].endswith(short[k]) for k in LEVELS)
    assert list(short) == list(LEVELS)


def test_flipped_reverses_each_word_and_keeps_punctuation_in_place():
    flipped = criteria_variant({"1": "Not Helpful - The response, unrelated."}, "flipped")
    assert flipped == {"1": "toN lufpleH - ehT esnopser, detalernu."}


def test_shuffled_keeps_the_same_words():
    shuffled = criteria_variant(LEVELS, "shuffled", seed=1)
    assert all(sorted(shuffled[k].split()) == sorted(LEVELS[k].split()) for k in LEVELS)
    assert any(shuffled[k] != LEVELS[k] for k in LEVELS)


@pytest.mark.parametrize(("variant", "symbols"), [("masked", "_"), ("gibberish", "!@#$%&*()<>?/+=€")])
def test_masked_and_gibberish_replace_only_letters_at_the_same_positions(variant, symbols):
    changed = criteria_variant(LEVELS, variant, seed=3)
    for key, original in LEVELS.items():
        assert len(changed[key]) == len(original)
        for before, after in zip(original, changed[key], strict=True):
            assert after == before or (before.isalpha() and after in symbols)
        replaced = sum(a != b for a, b in zip(original, changed[key], strict=True)) / sum(c.isalpha() for c in original)
        assert 0.15 < replaced < 0.45


@pytest.mark.parametrize("variant", ["gibberish", "shuffled", "masked"])
def test_random_variants_repeat_under_a_seed_and_change_with_it(variant):
    assert criteria_variant(LEVELS, variant, seed=5) == criteria_variant(LEVELS, variant, seed=5)
    assert criteria_variant(LEVELS, variant, seed=5) != criteria_variant(LEVELS, variant, seed=6)


def test_an_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="choose from original, shortened"):
        criteria_variant(LEVELS, "reversed")


def test_example_level_agreement_counts_invalid_verdicts_as_misses():
    rate = example_agreement([1, 2, None, 0, 1], [1, 1, 1, 0, 2])
    assert (rate.hits, rate.total, rate.rate) == (2, 5, 0.4)


def test_system_level_agreement_compares_modes_and_reports_ties():
    assert system_agreement([1, 1, 2], [1, 2, 1]) is True
    assert system_agreement([2, 2, 1], [1, 1, 0]) is False
    assert system_agreement([1, 2], [1, 1]) is None
    assert mode([None, None]) is None
    assert mode([0, 0, 1]) == 0


def test_agreement_by_scenario_has_counts():
    table = by_group(["math", "code", "math"], [1, 2, 2], [1, 2, 1])
    assert {g: (r.hits, r.total, s) for g, (r, s) in table.items()} == {"code": (1, 1, True), "math": (1, 2, None)}


def test_the_position_flip_rate_maps_swapped_verdicts_back():
    # Pair 1 stable (1 then 2-in-swapped-order), pair 2 flips (1 then 1), pair 3 tie both times, pair 4 invalid.
    rate = position_flip_rate([1, 1, 0, None], [2, 1, 0, 2])
    assert (rate.hits, rate.total) == (1, 3)
    assert unswap(1) == 2
    assert unswap(0) == 0
    assert unswap(None) is None


def test_self_consistency_takes_the_majority_of_samples():
    assert mode([1, 2, 1, None, 1]) == 1
    assert mode([1, 2]) is None


@pytest.mark.parametrize("variant", ["shortened", "gibberish", "shuffled", "flipped", "masked"])
def test_no_variant_but_the_original_carries_the_criterions_name_or_definition(variant):
    from evalhub.core.prompts.criteria_variants import criteria_section

    for criterion in BUILTIN_CRITERIA.values():
        args = (criterion["name"], criterion["definition"], criterion["levels"])
        original = criteria_section(*args, "original")
        shown = criteria_section(*args, variant, seed=4)
        assert criterion["definition"] in original
        assert criterion["definition"] not in shown
        assert not shown.startswith(criterion["name"])
        assert f"{criterion['name']}:" not in shown
        assert shown.count("\n") == len(criterion["levels"]) - 1, "the level lines, one per score"
