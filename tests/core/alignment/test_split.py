"""The held-out split: stratified by category, the same from the same seed and file whatever the ids or
order, and prompts added later placed without moving any prompt already placed."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from evalhub.core.alignment.split import HELD_OUT, TRAIN, SplitPrompt, assign_parts


def prompts(per_category: dict[str, int], start: int = 0) -> list[SplitPrompt]:
    out, key = [], start
    for category, count in per_category.items():
        for number in range(count):
            out.append(SplitPrompt(key=key, external_id=f"{category}-{number}", category=category))
            key += 1
    return out


def held_per_category(given: list[SplitPrompt], parts: dict) -> Counter:
    return Counter(prompt.category for prompt in given if parts[prompt.key] == HELD_OUT)


def test_each_category_holds_out_its_share_rounded_half_up():
    given = prompts({"math": 10, "code": 5, "chat": 3, "": 1})
    parts = assign_parts(given, 0.3, seed=7)
    assert set(parts.values()) == {TRAIN, HELD_OUT}
    assert held_per_category(given, parts) == {"math": 3, "code": 2, "chat": 1}  # 3.0, 1.5 → 2, 0.9 → 1, 0.3 → 0


def test_the_same_seed_and_file_give_the_same_split_whatever_the_ids_and_order():
    given = prompts({"math": 40, "code": 25})
    parts = assign_parts(given, 0.25, seed=3)
    shuffled = [SplitPrompt(key=p.key + 1000, external_id=p.external_id, category=p.category) for p in given]
    random.Random(1).shuffle(shuffled)
    again = assign_parts(shuffled, 0.25, seed=3)
    assert {p.external_id: parts[p.key] for p in given} == {p.external_id: again[p.key] for p in shuffled}
    other_seed = assign_parts(given, 0.25, seed=4)
    assert other_seed != parts


def test_prompts_added_later_move_no_placed_prompt_and_keep_each_categorys_share():
    first = prompts({"math": 8, "code": 4})
    placed = assign_parts(first, 0.5, seed=0)
    later = prompts({"math": 12, "code": 4, "new": 6})  # new prompts, given new keys and ids in the file below
    later = [
        SplitPrompt(key=100 + i, external_id=f"later-{p.external_id}", category=p.category) for i, p in enumerate(later)
    ]
    added = assign_parts([*first, *later], 0.5, seed=0, placed=placed)
    assert set(added) == {p.key for p in later}, "only the new prompts are placed"
    everything = {**placed, **added}
    assert held_per_category([*first, *later], everything) == {"math": 10, "code": 4, "new": 3}


def test_a_fraction_of_nothing_or_everything_is_refused():
    for fraction in (0, 1, 1.5):
        with pytest.raises(ValueError, match="strictly between 0 and 1"):
            assign_parts(prompts({"a": 3}), fraction, seed=0)


def test_each_prompt_is_held_out_about_as_often_as_the_fraction_over_seeds():
    """The draw picks a uniformly random subset of the category's size: every prompt's chance is the
    fraction (within sampling error over 2,000 seeds)."""
    given = prompts({"a": 10})
    counts = Counter()
    for seed in range(2000):
        parts = assign_parts(given, 0.3, seed=seed)
        counts.update(key for key, part in parts.items() if part == HELD_OUT)
    shares = [counts[p.key] / 2000 for p in given]
    assert all(abs(share - 0.3) < 0.04 for share in shares), shares
