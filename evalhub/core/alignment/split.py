"""A benchmark's prompts split once into *train* and *held-out*, so that a judge tuned on people's labels
is scored on labels it never saw (issue: judges that improve).

The unit is the prompt: every label on a prompt's pairs falls on one side, so two pairs sharing a prompt
cannot carry what was learnt on one to the other. The split is stratified by category: within each
category the held-out share is the chosen fraction, rounded to the nearest prompt. The order prompts are
drawn in comes from the seed and each prompt's id in the file, never from database ids or the order the
prompts are given in, so the same file and seed give the same split anywhere.

A split is made once and kept. Prompts added later are placed by `assign_parts` without moving any
prompt already placed: each goes where its category's held-out share ends nearest the fraction.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

TRAIN, HELD_OUT = "train", "held_out"
PARTS = (TRAIN, HELD_OUT)
Key = TypeVar("Key", bound=Hashable)


@dataclass(frozen=True)
class SplitPrompt(Generic[Key]):
    key: Key  # what the caller names the prompt by (e.g. its database id)
    external_id: str  # the prompt's id in the file: what the draw is keyed by
    category: str = ""


def draw_order(seed: int, external_id: str) -> bytes:
    """Where a prompt comes in its category's draw: a hash of the seed and its id in the file."""
    return hashlib.sha256(f"{seed}\x1f{external_id}".encode()).digest()


def assign_parts(
    prompts: Iterable[SplitPrompt[Key]], held_out_fraction: float, seed: int, placed: Mapping[Key, str] | None = None
) -> dict[Key, str]:
    """The part (TRAIN or HELD_OUT) of each prompt not in `placed` yet; `placed` (key → part) is left as
    it is. Within a category the new prompts are taken in draw order, each going to held-out while the
    category's held-out count is below round(fraction × its prompts so far)."""
    if not 0 < held_out_fraction < 1:
        raise ValueError(f"the held-out fraction must lie strictly between 0 and 1, not {held_out_fraction}.")
    placed = placed or {}
    by_category: dict[str, list[SplitPrompt[Key]]] = defaultdict(list)
    for prompt in prompts:
        by_category[prompt.category].append(prompt)
    out: dict[Key, str] = {}
    for members in by_category.values():
        total = sum(1 for prompt in members if prompt.key in placed)
        held = sum(1 for prompt in members if placed.get(prompt.key) == HELD_OUT)
        new = sorted(
            (prompt for prompt in members if prompt.key not in placed), key=lambda p: draw_order(seed, p.external_id)
        )
        for prompt in new:
            total += 1
            wanted = _rounded(held_out_fraction * total)
            part = HELD_OUT if held < wanted else TRAIN
            held += part == HELD_OUT
            out[prompt.key] = part
    return out


def _rounded(value: float) -> int:
    """Half up (Python's round() goes to even: 2.5 → 2, which would leave 5 prompts at 40 % held out)."""
    return int(value + 0.5)
