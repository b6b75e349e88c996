"""Reading G-Eval scores and YESciEval JSON ratings from real-looking judge answers."""

from __future__ import annotations

import pytest

from evalhub.core.judge_outputs import RubricRating, parse_likert_score, parse_rubric_json


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ("4", 4.0),
        ("Score: 4.5", 4.5),
        ("Evaluation Score - Coherence: 3", 3.0),
        ("I would rate this a 2 out of 5.", 2.0),
        ("10 steps later... final: 5", 5.0),
        ("Coherence (1-5): 2", 2.0),
        ("On a scale of 1 to 5, I give 3.", 3.0),
    ],
)
def test_a_likert_score_is_the_first_number_in_range(answer, score):
    assert parse_likert_score(answer) == score


@pytest.mark.parametrize("answer", ["", "No score.", "7", "0", "The summary is fine."])
def test_no_score_in_range_is_none(answer):
    assert parse_likert_score(answer) is None


RATING = RubricRating(4, "Clear and well connected.")


@pytest.mark.parametrize(
    "answer",
    [
        '{"rating": 4, "rationale": "Clear and well connected."}',
        '```json\n{"rating": 4, "rationale": "Clear and well connected."}\n```',
        'Here is my evaluation:\n{"rating": "4", "rationale": "Clear and well connected."}\nHope this helps!',
        "{'rating': 4, 'rationale': 'Clear and well connected.'}",
        '{"Cohesion": {"rating": 4, "rationale": "Clear and well connected."}}',
        '{"Rating": 4.0, "Rationale": "Clear and well connected."}',
    ],
)
def test_a_rubric_rating_is_read_through_the_usual_wrappings(answer):
    assert parse_rubric_json(answer) == RATING


def test_braces_inside_the_rationale_do_not_break_parsing():
    answer = '{"rating": 2, "rationale": "Uses {curly} braces and a quote \\" inside."}'
    assert parse_rubric_json(answer) == RubricRating(2, 'Uses {curly} braces and a quote " inside.')


@pytest.mark.parametrize(
    "answer",
    ["I give it a four.", '{"rating": 6, "rationale": "x"}', '{"rating": 3.5}', '{"rationale": "no rating"}', "{oops"],
)
def test_unusable_answers_are_none_so_the_caller_re_asks(answer):
    assert parse_rubric_json(answer) is None
