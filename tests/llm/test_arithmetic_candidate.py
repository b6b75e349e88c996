from __future__ import annotations

import asyncio

import pytest

from evalhub.llm import get_chat_client
from evalhub.llm.providers.arithmetic import answer, expressions
from evalhub.llm.stand_ins import is_stand_in


def test_it_evaluates_the_longest_expression_it_reads():
    text = "There are 4 × 12 muffins. She keeps 5, so she sells 4 × 12 − 5 muffins."
    assert answer(text).endswith("The answer is \\boxed{43}.")


def test_on_a_tie_the_latest_expression_wins():
    assert "\\boxed{12}" in answer("First 2 + 3, then 3 × 4.")


def test_with_no_calculation_it_says_it_guesses_the_first_number():
    assert answer("Four trays of 12 muffins, five kept.") == (
        "I found no calculation to do, so this is a guess.\n\nThe answer is \\boxed{12}."
    )


def test_only_plain_arithmetic_is_evaluated():
    assert expressions("2 ** 3 and 7 / 0 and (1 + 2) × 3") == [(2, "(1 + 2) × 3", 9)]


def test_it_answers_through_the_registry_and_says_what_it_is():
    client = get_chat_client("arithmetic")
    completion = asyncio.run(client.complete([{"role": "user", "content": "What is 17 × 23?"}]))
    assert completion.text.startswith("Offline calculator (not a language model).")
    assert "\\boxed{391}" in completion.text


def test_offline_stand_ins_are_recognised_and_real_providers_are_not(tmp_path):
    assert is_stand_in("heuristic:concise")
    assert is_stand_in("arithmetic")
    assert not is_stand_in("openai:gpt-4o")
    assert not is_stand_in(f"transformers:{tmp_path}")


@pytest.mark.parametrize(
    "hostile",
    [
        "1" + "0" * 400 + " / 3",  # an integer no float holds
        "+".join(["1"] * 20000),  # deeper than Python's parser recurses
        "9" * 4000 + " × " + "9" * 4000,  # a product too long to print
        "1" + "0" * 300 + " × 1" + "0" * 300,  # a product beyond any float
    ],
)
def test_arithmetic_it_cannot_evaluate_is_a_guess_not_a_crash(hostile):
    assert answer(hostile).startswith("I found no calculation to do")
