"""Battles that came in items: a pair of responses several people (or judges) labelled is one
independent unit, not as many independent battles as it has labels (issue 77).

Where three people label each pair, their labels agree far more often than battles drawn apart would,
and a bootstrap over single labels (or a sandwich summing each label's score apart) is too narrow by
about √(1 + (k − 1)ρ). Resampling whole items, as the judge lab does by prompt, is the honest unit.

Items are kept as *patterns*: the way one item's labels fell over the board's cells ((model, model,
outcome) → how many), and how many items fell that way. A few hundred patterns stand for any number of
items, so the board's cost still does not grow with its labels; a battle of no shared item is a
pattern of its own. With every item a single battle, the patterns are the cells and every draw is the
very one the battle bootstrap makes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ItemPatterns:
    """Entries (pattern, cell, amount): an item of `pattern` holds `amount` battles of `cell`."""

    pattern: np.ndarray  # (entries,) the pattern of each entry
    cell: np.ndarray  # (entries,) the cell (an index into the battles' cells)
    amount: np.ndarray  # (entries,) battles of that cell in one item of the pattern
    count: np.ndarray  # (patterns,) items that fell in each pattern

    @property
    def items(self) -> int:
        return int(self.count.sum())

    @property
    def shared(self) -> int:
        """Items of more than one battle."""
        per_pattern = np.bincount(self.pattern, weights=self.amount, minlength=len(self.count))
        return int(self.count[per_pattern > 1].sum())

    def cell_counts(self, draws: np.ndarray, cells: int) -> np.ndarray:
        """(R, patterns) items drawn → (R, cells) battles drawn."""
        stacked = draws.shape[0]
        weights = draws[:, self.pattern] * self.amount[None, :]
        flat = (np.arange(stacked)[:, None] * cells + self.cell[None, :]).ravel()
        return np.bincount(flat, weights=weights.ravel(), minlength=stacked * cells).reshape(stacked, cells)

    def meat(self, per_battle: np.ndarray, first: np.ndarray, second: np.ndarray, models: int) -> np.ndarray:
        """Σ over items of (its battles' summed score)(…)ᵀ: the clustered sandwich's middle, where
        `per_battle` is a cell's score per battle along e_first − e_second (w·(y − p))."""
        scores = np.zeros((len(self.count), models))
        values = per_battle[self.cell] * self.amount
        np.add.at(scores, (self.pattern, first[self.cell]), values)
        np.add.at(scores, (self.pattern, second[self.cell]), -values)
        return np.asarray(scores.T @ (self.count[:, None] * scores))

    def restricted(self, keep: np.ndarray) -> ItemPatterns:
        """The patterns over the kept cells only (`keep`: a mask over the cells), renumbered. An item is
        one pair of models, so it lies in one connected part of the board whole."""
        entries = keep[self.cell]
        new_cell = np.cumsum(keep) - 1
        patterns = np.unique(self.pattern[entries])
        new_pattern = np.full(len(self.count), -1)
        new_pattern[patterns] = np.arange(len(patterns))
        return ItemPatterns(
            pattern=new_pattern[self.pattern[entries]],
            cell=new_cell[self.cell[entries]],
            amount=self.amount[entries],
            count=self.count[patterns],
        )


def patterns_of(cell_counts: np.ndarray, shared: list[tuple[dict[int, int], int]]) -> ItemPatterns:
    """The patterns of a board whose cells hold `cell_counts` battles, where `shared` lists the items
    of more than one battle: ({cell: battles in one item}, how many items fell that way), in a fixed
    order. Every other battle is an item of its own. Refused (ValueError) if the shared items hold
    more battles of a cell than the cell has."""
    alone = np.asarray(cell_counts, dtype=float).copy()
    for cells, items in shared:
        for index, battles in cells.items():
            alone[index] -= battles * items
    if (alone < -1e-9).any():
        raise ValueError("items hold more battles of a cell than the board counts.")
    single = np.flatnonzero(alone > 0)
    pattern: list[int] = list(range(len(single)))
    cell: list[int] = single.tolist()
    amount: list[float] = [1.0] * len(single)
    count: list[float] = alone[single].tolist()
    for cells, items in shared:
        number = len(count)
        for index in sorted(cells):
            pattern.append(number)
            cell.append(index)
            amount.append(float(cells[index]))
        count.append(float(items))
    return ItemPatterns(
        pattern=np.asarray(pattern, dtype=np.intp),
        cell=np.asarray(cell, dtype=np.intp),
        amount=np.asarray(amount, dtype=float),
        count=np.asarray(count, dtype=float),
    )
