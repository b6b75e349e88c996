"""Instruction rewriting: the prompt that asks an LLM for revised judging instructions from a judge's
train disagreements, and the reading of its answer (issue: judges that improve).

The proposer sees the current instructions, the criterion, and a few train pairs where the judge and
people disagreed (each pair's question, its two submissions, people's verdict and the judge's); it
answers with the revised instructions between <instructions> tags. Held-out pairs never reach it: the
caller takes the pairs from the training set.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

MOST_CHARACTERS = 4000  # a proposal longer than this is cut: instructions, not an essay
SHOWN_CHARACTERS = 600  # of each submission shown to the proposer

REWRITE_PROMPT = "\n\n".join(
    [
        "You are improving the instructions given to an automatic judge that compares two submissions to a "
        "question under a criterion and answers 1 (the first is better), 2 (the second is better) or 0 (neither).",
        "Criterion:\n{criterion}",
        "The judge's current instructions:\n{instructions}",
        "Pairs where the judge disagreed with people:\n{pairs}",
        "Write revised instructions that would lead the judge to the people's verdicts on pairs like these, "
        "without naming these pairs. Keep them under 150 words. Answer with the instructions alone, between "
        "<instructions> and </instructions>.",
    ]
)


@dataclass(frozen=True)
class Disagreement:
    question: str
    first: str
    second: str
    people: int  # 1, 2 or 0, in the order shown
    judge: int | None  # the judge's verdict in the same order; None where it gave none


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + " […]"


def rewrite_messages(instructions: str, criterion: str, pairs: Sequence[Disagreement]) -> list[dict[str, str]]:
    shown = []
    for number, pair in enumerate(pairs, start=1):
        judge = "no verdict" if pair.judge is None else str(pair.judge)
        shown.append(
            f"Pair {number}\nQuestion: {_cut(pair.question, SHOWN_CHARACTERS)}\n"
            f"Submission 1: {_cut(pair.first, SHOWN_CHARACTERS)}\nSubmission 2: {_cut(pair.second, SHOWN_CHARACTERS)}\n"
            f"People's verdict: {pair.people}. The judge's verdict: {judge}."
        )
    body = REWRITE_PROMPT.format(
        criterion=criterion, instructions=instructions or "(none beyond the criterion)", pairs="\n\n".join(shown)
    )
    return [{"role": "user", "content": body}]


def parse_instructions(answer: str) -> str:
    """The instructions between the tags (the whole answer where there are none), cut to MOST_CHARACTERS;
    "" for an empty answer."""
    text = answer
    if "<instructions>" in answer:
        text = answer.split("<instructions>", 1)[1].split("</instructions>", 1)[0]
    return text.strip()[:MOST_CHARACTERS]
