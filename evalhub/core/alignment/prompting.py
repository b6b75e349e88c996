"""A judge version's worked examples as turns of the conversation before the pair it is asked about:
each example asked exactly as a pair is (ScaleEval's first-round prompt), then answered with people's
verdict in the format the judge must use, so the examples show both the task and the answer's form."""

from __future__ import annotations

from collections.abc import Sequence

from evalhub.core.alignment.versions import WorkedExample
from evalhub.core.scaleeval.debate import DebateSetup, initial_prompt

EXAMPLE_ANSWER = "A worked example: people who read both submissions chose this.\n{verdict}\n{verdict}"


def example_turns(examples: Sequence[WorkedExample], criteria: str) -> list[dict[str, str]]:
    """User and assistant turns, one pair of them per example, in the order given."""
    turns: list[dict[str, str]] = []
    for example in examples:
        setup = DebateSetup(example.question, example.first, example.second, criteria, agents=1, rounds=1)
        turns += initial_prompt(setup)
        turns.append({"role": "assistant", "content": EXAMPLE_ANSWER.format(verdict=example.verdict)})
    return turns
