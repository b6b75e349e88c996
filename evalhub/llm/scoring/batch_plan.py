"""How the log-prob scorer groups requests into forward passes (pure planning, no torch).

Requests that share a prefix form a group; prefixes that begin alike share a trunk (`shared_trunks`);
branches and answers then run in passes of rows alike in length (`length_runs`); a batch that ran out
of memory is split in two (`halves`). `transformers_scorer` runs the plan.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass
class Group:
    prefix_ids: tuple[int, ...]
    members: list[int]  # request indices


@dataclass
class Trunk:
    """Prefixes whose first `length` tokens are the same: those run once for all of them.
    Always shorter than each prefix, so every prefix keeps a branch of at least one token."""

    length: int
    groups: list[Group]

    @property
    def ids(self) -> tuple[int, ...]:
        return self.groups[0].prefix_ids[: self.length]


def common_length(a: Sequence[int], b: Sequence[int]) -> int:
    length = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        length += 1
    return length


def shared_trunks(groups: list[Group], window: int = 64) -> list[Trunk]:
    """Groups by the trunk they share, choosing the trunks that save the most tokens.

    Sorted prefixes that begin alike are neighbours, and a run of neighbours shares the
    shortest common prefix of its adjacent pairs. Sharing L tokens among k prefixes saves
    (k - 1)·L tokens; dynamic programming over runs of at most `window` prefixes picks the
    partition that saves the most. So GEM-S's prefixes of one paper share system prompt +
    abstract, rather than all papers sharing the system prompt alone, and two reviews that
    happen to begin with the same words do not break their paper's trunk apart.
    """
    ordered = sorted(groups, key=lambda group: group.prefix_ids)
    common = [common_length(a.prefix_ids, b.prefix_ids) for a, b in zip(ordered, ordered[1:], strict=False)]
    saved: list[float] = [0] * (len(ordered) + 1)  # saved[j]: the most the first j prefixes can save
    start = [0] * (len(ordered) + 1)  # where the last run of that best partition starts
    for j in range(1, len(ordered) + 1):
        saved[j], start[j] = saved[j - 1], j - 1  # prefix j - 1 alone
        shared = math.inf
        for i in range(j - 2, max(-1, j - 1 - window), -1):
            shared = min(shared, common[i])
            if not shared:
                break
            if saved[i] + (j - 1 - i) * shared > saved[j]:
                saved[j], start[j] = saved[i] + (j - 1 - i) * shared, i
    trunks: list[Trunk] = []
    j = len(ordered)
    while j:
        run = ordered[start[j] : j]
        shared = min(common[start[j] : j - 1], default=0)
        # Every prefix keeps a branch of at least one token (its last position predicts the answer).
        length = min([shared or math.inf, *(len(group.prefix_ids) - 1 for group in run)])
        trunks.append(Trunk(int(length), run))
        j = start[j]
    return trunks[::-1]


def length_runs(lengths: Sequence[int], widths: Sequence[int], capacity: int, overhead: float) -> list[list[int]]:
    """Rows split into passes of rows alike in length, at the least padded compute.

    A pass computes its rows times its longest row's tokens, plus `overhead` tokens' worth of fixed
    cost, and must hold rows × (longest + widest cache it reads) within `capacity` (a single row
    always runs). Sorted longest first, the best split is into runs of neighbours, found by dynamic
    programming: cost[j] = min over i of cost[i] + (j − i) · length of row i + overhead.
    """
    order = sorted(range(len(lengths)), key=lambda row: (-lengths[row], -widths[row]))
    cost = [0.0] + [math.inf] * len(order)
    start = [0] * (len(order) + 1)
    for j in range(1, len(order) + 1):
        widest = 0
        for i in range(j - 1, -1, -1):  # the run order[i:j]; its longest row is order[i]
            widest = max(widest, widths[order[i]])
            rows, longest = j - i, lengths[order[i]]
            if rows > 1 and rows * (longest + widest) > capacity:
                break  # longer runs only grow: no earlier start fits either
            if cost[i] + rows * longest + overhead <= cost[j]:  # on a tie, the longer run: fewer passes
                cost[j], start[j] = cost[i] + rows * longest + overhead, i
    runs: list[list[int]] = []
    j = len(order)
    while j:
        runs.append(order[start[j] : j])
        j = start[j]
    return runs[::-1]


def halves(batch: list[Trunk]) -> list[list[Trunk]] | None:
    """A batch split in two for a retry after running out of memory (None: one request, no split)."""
    if len(batch) > 1:
        return [batch[: len(batch) // 2], batch[len(batch) // 2 :]]
    trunk = batch[0]
    if len(trunk.groups) > 1:
        middle = len(trunk.groups) // 2
        return [[Trunk(trunk.length, trunk.groups[:middle])], [Trunk(trunk.length, trunk.groups[middle:])]]
    group = trunk.groups[0]
    if len(group.members) == 1:
        return None
    middle = len(group.members) // 2
    return [
        [Trunk(trunk.length, [Group(group.prefix_ids, members)])]
        for members in (group.members[:middle], group.members[middle:])
    ]
