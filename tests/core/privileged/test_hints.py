from __future__ import annotations

import pytest

from evalhub.core.privileged.hints import (
    final_answer,
    hint_messages,
    leaking_hints,
    normalise,
    parse_hints,
    prefix_hints,
)

SOLUTION = (
    "We write the sum as an arithmetic series. The first term is 3 and the last is 39. "
    "There are 13 terms, since the common difference is 3. The sum is half the number of terms times "
    "the sum of the first and last terms. So the sum is $\\frac{13}{2} \\cdot 42$. "
    "Therefore the answer is $\\boxed{273}$."
)


def test_the_hint_prompt_is_figure_9_with_k_partial_solutions():
    [message] = hint_messages("Sum 3+6+…+39.", SOLUTION, k=3)
    assert message["role"] == "user"
    assert message["content"].startswith("I have a math problem and its corresponding solution. I want you to write 3 ")
    assert "<partial_solution_N> and </partial_solution_N>" in message["content"]
    assert "Do not give away the boxed answer" in message["content"]
    assert message["content"].endswith("Problem: Sum 3+6+…+39.\n\nSolution:\n" + SOLUTION)


def test_hints_are_read_from_their_tags_in_order_and_a_missing_one_is_named():
    text = "<partial_solution_2>B</partial_solution_2> junk <partial_solution_1> A </partial_solution_1>"
    assert parse_hints(text, 2) == ["A", "B"]
    with pytest.raises(ValueError, match="partial_solution_3"):
        parse_hints(text, 3)


@pytest.mark.parametrize(
    ("reference", "explicit", "expected"),
    [
        (SOLUTION, "", "273"),
        ("So $x = \\boxed{\\frac{1}{\\sqrt{2}}}$.", "", "\\frac{1}{\\sqrt{2}}"),
        ("Janet sells 9 eggs.\n#### 18", "", "18"),
        ("Adding them, the final answer is 7.", "", "7"),
        ("Reasoning about the options.\nAnswer: (B)", "", "(B)"),
        ("My answer: maybe", "", None),
        (SOLUTION, "273 apples", "273 apples"),
        ("A discussion without an answer.", "", None),
    ],
)
def test_the_final_answer_is_the_explicit_one_else_the_last_boxed_else_gsm8k_else_stated(reference, explicit, expected):
    assert final_answer(reference, explicit) == expected


def test_a_planted_leak_is_caught_and_only_whole_answers_count():
    hints = ["The series has 13 terms.", "Its sum is 13/2 times 42, which is 273.", "So we get 2730 / 10."]
    assert leaking_hints(hints, "273") == [1]
    assert leaking_hints(["Evaluate $\\dfrac{1}{2}$ here"], "\\frac{1}{2}") == [0]
    assert leaking_hints(["Put it in \\boxed{x}"], None) == [0]
    assert leaking_hints(["No answer here."], None) == []


def test_normalising_drops_spacing_dollars_text_and_degrees():
    assert normalise(" $27^\\circ, 63^\\circ$ ") == normalise("27°,63°") == "27,63"
    assert normalise("\\text{ 5 apples }.") == "5apples"


def test_rule_based_hints_are_consecutive_parts_that_never_state_the_answer():
    made = prefix_hints(SOLUTION, 2, final_answer(SOLUTION))
    assert len(made.hints) == 2
    assert made.dropped == 1  # the sentence with the boxed answer
    assert leaking_hints(made.hints, "273") == []
    joined = " ".join(made.hints)
    assert SOLUTION.startswith(made.hints[0])
    assert made.hints[1] in SOLUTION
    assert "So the sum is" not in joined  # the last part of the solution is never given away


def test_rule_based_hints_need_more_sentences_than_hints():
    with pytest.raises(ValueError, match="need at least 4"):
        prefix_hints("One step. Then $\\boxed{2}$.", 3, "2")
