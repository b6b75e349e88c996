"""Learning from people's reasons, after MLflow's MemAlign: the reasons people wrote on the train pairs
where a judge disagreed with them are distilled into numbered guidelines (a semantic memory, kept as the
judge version's instructions, so two versions' guidelines are diffed like any instructions), and the
disagreements people explained are kept as worked examples (an episodic memory).

The proposer sees the criterion, the judge's current instructions, and each disagreement's question, its
two submissions (cut), people's verdict, the judge's and what people wrote; it answers with numbered
guidelines between <guidelines> tags. The caller takes the pairs and the reasons from the training set:
no held-out reason reaches it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from evalhub.core.alignment.rewriting import SHOWN_CHARACTERS, Disagreement

MOST_GUIDELINES = 12
MOST_CHARACTERS = 3000
REASON_CHARACTERS = 500  # of each reason shown

DISTIL_PROMPT = "\n\n".join(
    [
        "You are writing guidelines for an automatic judge that compares two submissions to a question under a "
        "criterion and answers 1 (the first is better), 2 (the second is better) or 0 (neither).",
        "Criterion:\n{criterion}",
        "The judge's current instructions:\n{instructions}",
        "Pairs where the judge disagreed with people, with what people wrote about their verdict:\n{pairs}",
        "Distil the rules people applied into at most {most} short numbered guidelines that would lead the judge "
        "to people's verdicts on pairs like these. State each rule generally, without naming these pairs. Answer "
        "with the guidelines alone, numbered 1., 2., ..., between <guidelines> and </guidelines>.",
    ]
)


@dataclass(frozen=True)
class Explained:
    """A train disagreement and the reasons people gave for their verdict on it."""

    pair: Disagreement
    reasons: tuple[str, ...]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " […]"


def distil_messages(instructions: str, criterion: str, explained: Sequence[Explained]) -> list[dict[str, str]]:
    shown = []
    for number, item in enumerate(explained, start=1):
        pair = item.pair
        judge = "no verdict" if pair.judge is None else str(pair.judge)
        reasons = "\n".join(f"- {_cut(reason, REASON_CHARACTERS)}" for reason in item.reasons)
        shown.append(
            f"Pair {number}\nQuestion: {_cut(pair.question, SHOWN_CHARACTERS)}\n"
            f"Submission 1: {_cut(pair.first, SHOWN_CHARACTERS)}\nSubmission 2: {_cut(pair.second, SHOWN_CHARACTERS)}\n"
            f"People's verdict: {pair.people}. The judge's verdict: {judge}.\nWhat people wrote:\n{reasons}"
        )
    body = DISTIL_PROMPT.format(
        criterion=criterion,
        instructions=instructions or "(none beyond the criterion)",
        pairs="\n\n".join(shown),
        most=MOST_GUIDELINES,
    )
    return [{"role": "user", "content": body}]


_NUMBERED = re.compile(r"^\s*(\d+)[.)]\s+(.+?)\s*$")


def parse_guidelines(answer: str) -> str:
    """The numbered guidelines between the tags (the whole answer where there are none), renumbered 1..n
    and at most MOST_GUIDELINES, one per line; "" where none is numbered."""
    text = answer.split("<guidelines>", 1)[1].split("</guidelines>", 1)[0] if "<guidelines>" in answer else answer
    rules = [found.group(2) for line in text.splitlines() if (found := _NUMBERED.match(line))]
    return "\n".join(f"{n}. {rule}" for n, rule in enumerate(rules[:MOST_GUIDELINES], start=1))[:MOST_CHARACTERS]
