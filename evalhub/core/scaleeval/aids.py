"""Blind first, then the aid: which aid a person sees on an item, and how much seeing it moved them.

ScaleEval's human step shows people the agents' debate before they decide, and the same agents are
then measured against those verdicts. People shown an LLM's suggestion tend to adopt it (Schroeder et
al., ACL 2025, arXiv 2507.15821), which inflates the agents' measured agreement. So a person first
gives a blind verdict, then sees an aid and keeps or changes it; each item is assigned one aid at
random (the whole debate, one agent's final argument, or none as the control), and the effect of
each aid is measured on the same people and items:

- the flip rate after the reveal (Wilson interval);
- among flips where the agents had a majority, the share that moved toward it;
- where a gold verdict is known, accuracy before and after the reveal, the difference with a paired
  bootstrap interval over items;
- the anchoring inflation: Cohen's κ of the agents' majority with people's post-reveal verdicts
  minus κ with their blind verdicts, with a paired bootstrap interval over items.

Verdicts are in one fixed order per item (the agents'): 1, 2 or 0 (neither).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from evalhub.core.judge_lab.measures import MIN_FOR_INTERVAL, Interval, kappa, weighted_kappas, wilson

DEBATE, CRITIQUE, NO_AID = "debate", "critique", "none"
AIDS = (DEBATE, CRITIQUE, NO_AID)
AID_NAMES = {DEBATE: "the agents' debate", CRITIQUE: "one agent's final argument", NO_AID: "no aid (control)"}
RESAMPLES = 1000
SEED = 0


def aid_for(seed: int, person: int, position: int, aids: Sequence[str]) -> str:
    """The aid for a person's `position`-th item (0, 1, …) of a run: every block of len(aids) items
    holds each aid once, in an order drawn from (seed, person, block). Balanced per person and the
    same again from the seed, whichever items the positions fall on."""
    if not aids:
        raise ValueError("a blind-first run needs at least one aid (none is one).")
    block, place = divmod(position, len(aids))
    order = list(aids)
    random.Random(f"{seed}:{person}:{block}").shuffle(order)
    return order[place]


def critic_of(seed: int, item: int, speakers: Sequence[int]) -> int:
    """Which agent's final argument is the critique shown on an item (drawn from the seed)."""
    if not speakers:
        raise ValueError("an item without agents has no critique.")
    return random.Random(f"{seed}:{item}:critique").choice(sorted(speakers))


def majority(verdicts: Sequence[int | None]) -> int | None:
    """The verdict more than half of the valid ones give, else None (no majority to move toward)."""
    valid = [v for v in verdicts if v is not None]
    if not valid:
        return None
    top, count = Counter(valid).most_common(1)[0]
    return top if 2 * count > len(valid) else None


@dataclass(frozen=True)
class RevealedVerdict:
    """One person's two verdicts on one item, in the agents' order."""

    item: Hashable
    aid: str
    blind: int
    revealed: int
    agents: int | None = None  # the agents' majority verdict, None without one
    gold: int | None = None  # the known right verdict, where there is one


@dataclass(frozen=True)
class AidEffect:
    aid: str
    verdicts: int  # people's verdict pairs under this aid
    items: int
    flips: Interval  # share of verdicts changed after the reveal
    flipped: int
    toward_agents: Interval  # among flips on items with an agents' majority, the share toward it
    flips_with_majority: int
    accuracy_blind: Interval
    accuracy_revealed: Interval
    accuracy_change: Interval  # revealed − blind, paired bootstrap over items
    gold_items: int
    kappa_blind: float | None
    kappa_revealed: float | None
    inflation: Interval  # κ(agents, revealed) − κ(agents, blind), paired bootstrap over items
    kappa_items: int


STACK = 100  # resamples weighed at once: 100 × the verdicts' count of floats


def _paired_interval(
    statistic: Callable[[Sequence[RevealedVerdict], np.ndarray], np.ndarray],
    rows: Sequence[RevealedVerdict],
    resamples: int,
    seed: int,
) -> Interval:
    """The statistic on the rows with a percentile interval from resampling items with replacement (all
    of an item's verdicts together: the two verdicts of a pair and the people on one item are paired).
    `statistic(rows, weights)` gives one value per row of weights (R, rows), each row counting its
    verdicts as often as their item was drawn."""
    if not rows:
        return Interval(None)
    value = float(statistic(rows, np.ones((1, len(rows))))[0])
    if np.isnan(value):
        return Interval(None)
    items = list(dict.fromkeys(row.item for row in rows))  # in the order they come
    if len(items) < MIN_FOR_INTERVAL:
        return Interval(value)
    index = {item: i for i, item in enumerate(items)}
    of_row = np.array([index[row.item] for row in rows])
    rng = np.random.default_rng(seed)
    estimates = []
    for start in range(0, resamples, STACK):
        draws = rng.integers(0, len(items), size=(min(STACK, resamples - start), len(items)))
        times = np.stack([np.bincount(drawn, minlength=len(items)) for drawn in draws])
        estimates.append(statistic(rows, times[:, of_row].astype(float)))
    drawn = np.concatenate(estimates)
    drawn = drawn[~np.isnan(drawn)]
    if not len(drawn):
        return Interval(value)
    low, high = np.percentile(drawn, [2.5, 97.5])
    return Interval(value, float(low), float(high))


def _kappa_change(rows: Sequence[RevealedVerdict], weights: np.ndarray) -> np.ndarray:
    agents = [row.agents for row in rows if row.agents is not None]  # the rows are those with a majority
    after = weighted_kappas([row.revealed for row in rows], agents, weights)
    return np.asarray(after - weighted_kappas([row.blind for row in rows], agents, weights))


def _accuracy_change(rows: Sequence[RevealedVerdict], weights: np.ndarray) -> np.ndarray:
    change = np.array([(row.revealed == row.gold) - (row.blind == row.gold) for row in rows], dtype=float)
    return np.asarray(weights @ change / weights.sum(axis=1))


def aid_effect(aid: str, rows: Sequence[RevealedVerdict], resamples: int = RESAMPLES, seed: int = SEED) -> AidEffect:
    """The effect of one aid on the verdict pairs given under it."""
    flipped = [row for row in rows if row.revealed != row.blind]
    with_majority = [row for row in flipped if row.agents is not None]
    gold = [row for row in rows if row.gold is not None]
    judged = [row for row in rows if row.agents is not None]
    flips = wilson(len(flipped), len(rows))
    toward = wilson(sum(row.revealed == row.agents for row in with_majority), len(with_majority))
    gold_items = len({row.item for row in gold})
    before = wilson(sum(row.blind == row.gold for row in gold), len(gold))
    after = wilson(sum(row.revealed == row.gold for row in gold), len(gold))
    agents = [r.agents for r in judged if r.agents is not None]
    kappa_blind = kappa([r.blind for r in judged], agents)
    kappa_revealed = kappa([r.revealed for r in judged], agents)
    few = len({row.item for row in rows}) < MIN_FOR_INTERVAL
    return AidEffect(
        aid=aid,
        verdicts=len(rows),
        items=len({row.item for row in rows}),
        flips=Interval(flips.value) if few else flips,
        flipped=len(flipped),
        toward_agents=toward if len(with_majority) >= MIN_FOR_INTERVAL else Interval(toward.value),
        flips_with_majority=len(with_majority),
        accuracy_blind=before if gold_items >= MIN_FOR_INTERVAL else Interval(before.value),
        accuracy_revealed=after if gold_items >= MIN_FOR_INTERVAL else Interval(after.value),
        accuracy_change=_paired_interval(_accuracy_change, gold, resamples, seed),
        gold_items=gold_items,
        kappa_blind=kappa_blind,
        kappa_revealed=kappa_revealed,
        inflation=_paired_interval(_kappa_change, judged, resamples, seed),
        kappa_items=len({row.item for row in judged}),
    )


def aid_effects(rows: Sequence[RevealedVerdict], resamples: int = RESAMPLES, seed: int = SEED) -> list[AidEffect]:
    """One effect per aid that has verdicts, in AIDS order."""
    return [
        aid_effect(aid, [row for row in rows if row.aid == aid], resamples, seed)
        for aid in AIDS
        if any(row.aid == aid for row in rows)
    ]
