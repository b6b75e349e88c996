"""Reading G-Eval scores and YESciEval JSON ratings from real-looking judge answers."""

from __future__ import annotations

import pytest

from evalhub.core.prompts.judge_outputs import RubricRating, parse_likert_score, parse_rubric_json


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        ("4", 4.0),
        ("**4**", 4.0),
        ("4/5", 4.0),
        ("Score: 4.5", 4.5),
        ("Evaluation Score - Coherence: 3", 3.0),
        ("Coherence (1-5): 2", 2.0),
        ("Rating: 4/5", 4.0),
        ("**Score:** 4", 4.0),
        ("The summary covers the main points.\n\n4", 4.0),
        ("Coherence: 4\nThe sentences follow one another well.", 4.0),
    ],
)
def test_a_likert_score_is_read_when_it_is_stated_as_a_score(answer, score):
    assert parse_likert_score(answer) == score


# G-Eval answers as judges write them (DHP, Appendix G): the steps come numbered before the score.
STEPS_THEN_SCORE = """1. Read the news article carefully and identify the main topic and key points.
2. Read the summary and compare it to the news article.
3. Check if the summary covers the main topic and key points, and if it presents them in a clear order.
4. Assign a score for coherence on a scale of 1 to 5.

Coherence: 4"""


@pytest.mark.parametrize(
    ("answer", "score"),
    [
        (STEPS_THEN_SCORE, 4.0),
        ("1. Read the summary.\n2. Compare it with the article.\n9. Rate: 4", 4.0),
        ("Step 1: read.\nStep 2: compare.\nFinal score: 2", 2.0),
    ],
)
def test_numbered_steps_before_the_score_are_not_read_as_the_score(answer, score):
    assert parse_likert_score(answer) == score


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "No score.",
        "7",
        "0",
        "Score: 7",
        "The summary is fine.",
        "Submission 1 is clearer than the article suggests, but it leaves out the ending.",
        "1. Read the summary.\n2. Compare it with the article.\n3. The summary is coherent.",
        "I would rate this a 2 out of 5 because it misses the main point.",
        "On a scale of 1 to 5, I give 3 for this one.",
        "Step 1: read it.\nStep 2: compare it.",
    ],
)
def test_prose_without_a_stated_score_gives_none_so_it_is_reasked(answer):
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
