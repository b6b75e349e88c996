"""The few-shot rule: examples only from disagreements, categories taking turns, no prompt twice, both
orders shown, the same from the same seed."""

from __future__ import annotations

import pytest

from evalhub.core.alignment.fewshot import TrainingPair, choose_examples
from evalhub.core.judge_lab.measures import FIRST, NO_VERDICT, SECOND, TIE


def pairs() -> list[TrainingPair]:
    out = []
    for number in range(12):
        category = "math" if number < 7 else "code"
        judge = SECOND if number % 2 == 0 else FIRST  # wrong on the even ones
        out.append(TrainingPair(("overall", number, number + 100), f"p{number // 2}", category, FIRST, judge))
    out.append(TrainingPair(("overall", 50, 51), "p50", "chat", TIE, NO_VERDICT))  # no verdict: a disagreement
    out.append(TrainingPair(("overall", 60, 61), "p60", "chat", SECOND, SECOND))  # agreed: never an example
    return out


def test_examples_come_from_disagreements_categories_in_turn_no_prompt_twice_both_orders():
    chosen = choose_examples(pairs(), k=5, seed=3)
    assert [example.category for example in chosen] == ["math", "code", "chat", "math", "code"]
    assert len({example.prompt for example in chosen}) == 5
    assert "p60" not in {example.prompt for example in chosen}
    assert [example.reversed for example in chosen] == [False, True, False, True, False]
    for example in chosen:
        people = next(pair.people for pair in pairs() if pair.item == example.item)
        expected = {FIRST: SECOND, SECOND: FIRST}.get(people, people) if example.reversed else people
        assert example.verdict == expected


def test_the_same_seed_chooses_the_same_examples_and_asking_for_more_than_there_are_gives_all():
    assert choose_examples(pairs(), 4, seed=1) == choose_examples(list(reversed(pairs())), 4, seed=1)
    every = choose_examples(pairs(), 50, seed=1)
    assert len(every) == 7  # every disagreement, one per prompt: math p0…p3, code p4 and p5, chat p50
    with pytest.raises(ValueError, match="at least one"):
        choose_examples(pairs(), 0)
