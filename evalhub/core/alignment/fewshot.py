"""Worked examples for a judge's prompt, taken from the train pairs where the judge and people disagree
(issue: judges that improve, "few-shot from disagreements").

The rule is fixed in advance, so that nobody picks examples by looking at held-out results: categories
take turns (those with the most disagreements first, then by name), each giving the next of its pairs
in the seed's draw order; no two examples share a prompt; every second example is shown in the reverse
of the pair's order, so the judge sees both orders and cannot learn "the first is better".
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from evalhub.core.judge_lab.measures import FIRST, SECOND

FLIPPED = {FIRST: SECOND, SECOND: FIRST}


@dataclass(frozen=True)
class TrainingPair:
    """A train pair as a tuner may read it: people's verdict and the judge's, in the pair's order."""

    item: Hashable  # the pair under one criterion
    prompt: Hashable
    category: str
    people: int  # FIRST, SECOND or TIE
    judge: int  # FIRST, SECOND, TIE or NO_VERDICT


@dataclass(frozen=True)
class Example:
    item: Hashable
    prompt: Hashable
    category: str
    reversed: bool  # shown in the reverse of the pair's order
    verdict: int  # people's verdict in the order shown


def _draw(seed: int, item: Hashable) -> bytes:
    return hashlib.sha256(f"{seed}\x1f{item!r}".encode()).digest()


def choose_examples(pairs: Sequence[TrainingPair], k: int, seed: int = 0) -> list[Example]:
    """Up to k worked examples from the pairs the judge got wrong (see the module's rule)."""
    if k < 1:
        raise ValueError("ask for at least one example.")
    wrong: dict[str, list[TrainingPair]] = defaultdict(list)
    for pair in pairs:
        if pair.judge != pair.people:
            wrong[pair.category].append(pair)
    queues = {category: sorted(members, key=lambda p: _draw(seed, p.item)) for category, members in wrong.items()}
    turns = sorted(queues, key=lambda category: (-len(queues[category]), category))
    chosen: list[Example] = []
    used_prompts: set[Hashable] = set()
    while len(chosen) < k and any(queues.values()):
        for category in turns:
            queue = queues[category]
            while queue and queue[0].prompt in used_prompts:
                queue.pop(0)
            if not queue or len(chosen) == k:
                continue
            pair = queue.pop(0)
            used_prompts.add(pair.prompt)
            reversed_ = len(chosen) % 2 == 1
            verdict = FLIPPED.get(pair.people, pair.people) if reversed_ else pair.people
            chosen.append(Example(pair.item, pair.prompt, pair.category, reversed_, verdict))
    return chosen
