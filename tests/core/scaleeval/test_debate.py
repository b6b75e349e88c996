"""The debate protocol with scripted agents."""

from __future__ import annotations

import asyncio

import pytest

from evalhub.core.prompts import sections as ps
from evalhub.core.runs.usage import CallStats
from evalhub.core.scaleeval.debate import (
    FORMAT_REMINDER,
    MAJORITY,
    DebateSetup,
    Turn,
    consensus,
    discussion_prompt,
    initial_prompt,
    parse_verdict,
    run_debate,
    shown_swapped,
)

SETUP = DebateSetup("Q?", "first answer", "second answer", "Helpfulness", agents=3, rounds=3)


def scripted(answers: dict[tuple[int, int], list[str]]):
    """ask() that answers agent a in round r with the next scripted text; records every call."""
    calls = []

    async def ask(agent, round_number, messages):
        calls.append((agent, round_number, messages))
        return answers[(round_number, agent)].pop(0), CallStats(input_tokens=1)

    return ask, calls


async def test_unanimity_in_round_0_stops_the_debate_early():
    ask, calls = scripted({(0, a): ["Fine.\n1"] for a in range(3)})
    outcome = await run_debate(SETUP, ask)
    assert (outcome.verdict, outcome.rounds_used, len(outcome.turns), len(calls)) == (1, 1, 3, 3)


async def test_disagreement_then_convergence_in_a_discussion_round():
    ask, calls = scripted(
        {
            (0, 0): ["A\n1"],
            (0, 1): ["B\n2"],
            (0, 2): ["C\n1"],
            (1, 0): ["A\n1"],
            (1, 1): ["I was persuaded.\n1"],
            (1, 2): ["C\n1"],
        }
    )
    outcome = await run_debate(SETUP, ask)
    assert (outcome.verdict, outcome.rounds_used) == (1, 2)
    round_1_prompt = next(m for a, r, m in calls if (a, r) == (1, 1))[0]["content"]
    assert "Always remember you are Speaker 2." in round_1_prompt
    sections = ps.parse_sections(round_1_prompt)
    assert sections["Speaker 1's Initial Evaluation"] == "A\n1"
    assert sections["Speaker 3's Initial Evaluation"] == "C\n1"


async def test_disagreement_through_the_last_round_leaves_the_debate_unresolved():
    ask, _ = scripted({(r, a): [f"stubborn\n{a % 2 + 1}"] for r in range(3) for a in range(3)})
    outcome = await run_debate(SETUP, ask)
    assert (outcome.verdict, outcome.rounds_used, len(outcome.turns), outcome.resolved) == (None, 3, 9, False)


async def test_an_unparsable_answer_is_asked_again_then_recorded_invalid_and_never_a_tie():
    ask, calls = scripted(
        {
            (0, 0): ["I think the first.", "Still prose, no number."],
            (0, 1): ["ok\n1"],
            (0, 2): ["no digit", "Fine:\n1"],
            (1, 0): ["A\n1"],
            (1, 1): ["B\n1"],
            (1, 2): ["C\n1"],
        }
    )
    outcome = await run_debate(SETUP, ask)
    round_0 = [t for t in outcome.turns if t.round == 0]
    assert [(t.verdict, t.reasked, t.valid) for t in round_0] == [
        (None, True, False),
        (1, False, True),
        (1, True, True),
    ]
    assert outcome.rounds_used == 2, "an invalid turn blocks unanimity: no silent tie, no silent agreement"
    reask = next(m for a, r, m in calls if (a, r) == (0, 0) and len(m) == 3)
    assert reask[1] == {"role": "assistant", "content": "I think the first."}
    assert reask[2]["content"] == FORMAT_REMINDER


async def test_a_resumed_debate_asks_only_for_the_missing_turns():
    done = [Turn(0, 0, "A\n1", 1), Turn(1, 0, "B\n2", 2)]
    ask, calls = scripted({(0, 2): ["C\n1"], **{(1, a): ["agree\n1"] for a in range(3)}})
    outcome = await run_debate(SETUP, ask, done=done)
    assert [(a, r) for a, r, _ in calls] == [(2, 0), (0, 1), (1, 1), (2, 1)]
    assert outcome.verdict == 1
    assert len(outcome.turns) == 6


async def test_each_turn_is_reported_as_it_completes():
    ask, _ = scripted({(0, a): ["x\n2"] for a in range(3)})
    seen = []

    async def on_turn(turn):
        seen.append((turn.agent, turn.round, turn.verdict, turn.extra.input_tokens))

    await run_debate(SETUP, ask, on_turn=on_turn)
    assert sorted(seen) == [(0, 0, 2, 1), (1, 0, 2, 1), (2, 0, 2, 1)]


@pytest.mark.parametrize(
    ("text", "verdict"),
    [
        ("Reasoning...\n1", 1),
        ("x\n 2 \n\n", 2),
        ("0", 0),
        ("x\n1.", None),
        ("x\n**1**", 1),
        ('x\n"2"', 2),
        ("x\n`0`", 0),
        ("x\n“1”", 1),
        ("x\nVerdict: 2", 2),
        ("x\n**Final answer:** 1", 1),
        ("x\nFinal answer: **1**", 1),
        ("x\nSubmission 2", None),
        ("x\nSubmission 2 is better", None),
        ("x\n12", None),
        ("1\nbecause", None),
        ("", None),
        ("The answer is 1", None),
    ],
)
def test_the_verdict_is_read_strictly_from_the_last_line(text, verdict):
    assert parse_verdict(text) == verdict


@pytest.mark.parametrize(
    ("verdicts", "rule", "expected"),
    [
        ([1, 1, 1], "unanimous", 1),
        ([1, 1, 2], "unanimous", None),
        ([0, 0, 0], "unanimous", 0),
        ([1, 1, None], "unanimous", None),
        ([1, 1, 2], MAJORITY, 1),
        ([1, 2, 0], MAJORITY, None),
        ([1, None, None], MAJORITY, None),
        ([2, 2, None], MAJORITY, 2),
        ([1, 1, 2, 2], MAJORITY, None),
    ],
)
def test_consensus_rules(verdicts, rule, expected):
    assert consensus(verdicts, rule) == expected


def test_order_randomisation_is_reproducible_and_balanced():
    flips = [shown_swapped(42, f"debate-{i}") for i in range(2000)]
    assert flips == [shown_swapped(42, f"debate-{i}") for i in range(2000)]
    assert 900 < sum(flips) < 1100
    assert flips != [shown_swapped(43, f"debate-{i}") for i in range(2000)]


def test_privileged_information_is_its_own_marked_section_only_when_given():
    with_info = DebateSetup("Q?", "a", "b", "C", privileged={"Reference answer": "42", "Rating guidelines": "strict"})
    text = initial_prompt(with_info)[0]["content"]
    sections = ps.parse_sections(text)
    assert sections["Reference answer (visible to evaluators only; the submissions' authors never saw it)"] == "42"
    assert sections["Rating guidelines (visible to evaluators only; the submissions' authors never saw it)"] == "strict"
    without = initial_prompt(DebateSetup("Q?", "a", "b", "C"))[0]["content"]
    assert "42" not in without
    assert "visible to evaluators only" not in without
    assert sections[ps.SUBMISSION_1] == "a"
    assert sections[ps.QUESTION] == "Q?"


def test_the_last_round_history_option_shows_only_the_previous_round_of_others():
    setup = DebateSetup("Q?", "a", "b", "C", rounds=3, history="last")
    earlier = [Turn(a, r, f"agent {a} round {r}\n1", 1) for r in range(2) for a in range(3)]
    sections = ps.parse_sections(discussion_prompt(setup, 0, 2, earlier)[0]["content"])
    speakers = sorted(title for title in sections if title.startswith("Speaker"))
    assert speakers == [
        "Speaker 1's Discussion - Round 1",
        "Speaker 1's Initial Evaluation",
        "Speaker 2's Discussion - Round 1",
        "Speaker 3's Discussion - Round 1",
    ]


async def test_when_one_agent_fails_its_round_mates_still_finish_and_are_reported():
    reported = []

    async def ask(agent, round_number, messages):
        if agent == 1:
            raise RuntimeError("provider down")
        await asyncio.sleep(0.01)
        return "x\n1", CallStats()

    async def on_turn(turn):
        reported.append(turn.agent)

    with pytest.raises(RuntimeError, match="provider down"):
        await run_debate(SETUP, ask, on_turn=on_turn)
    assert sorted(reported) == [0, 2]
