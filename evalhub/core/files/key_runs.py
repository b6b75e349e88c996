"""Integer keys kept as sorted runs of consecutive keys, in a few bytes however many there are.

A writer that checks its rows' foreign keys once they are all written kept every distinct key in a
set: about 70 bytes a key, and a labels file in the shape of Arena's votes names two new responses a
row (1.3 GB at ten million votes). The keys an import reserves come from a sequence in blocks, so they
fold into a few runs; keys with gaps between them cost 16 bytes each at most."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator

import numpy as np


class KeyRuns:
    """Add integer keys (in any order, repeated or not); `runs` gives them back as sorted, disjoint runs
    [first, last] of consecutive keys, merged with their neighbours."""

    FOLD_EVERY = 1 << 16  # keys added before they are folded into the runs

    def __init__(self, keys: Iterable[int] = ()) -> None:
        self.firsts = np.zeros(0, dtype=np.int64)
        self.lasts = np.zeros(0, dtype=np.int64)
        self.added = array("q")
        self.add_all(keys)

    def add_all(self, keys: Iterable[int]) -> None:
        self.added.extend(keys)
        if len(self.added) >= self.FOLD_EVERY:
            self._fold()

    def _fold(self) -> None:
        if not self.added:
            return
        fresh = np.unique(np.frombuffer(self.added, dtype=np.int64))
        self.added = array("q")
        firsts = np.concatenate([self.firsts, fresh])
        lasts = np.concatenate([self.lasts, fresh])
        order = np.argsort(firsts, kind="stable")
        firsts, lasts = firsts[order], lasts[order]
        reach = np.maximum.accumulate(lasts)  # the last key covered by this run or any before it
        starts = np.flatnonzero(np.concatenate([[True], firsts[1:] > reach[:-1] + 1]))
        self.firsts = firsts[starts]
        self.lasts = reach[np.append(starts[1:] - 1, len(firsts) - 1)]

    def __len__(self) -> int:
        """How many distinct keys."""
        self._fold()
        return int((self.lasts - self.firsts + 1).sum())

    def runs(self, most: int) -> Iterator[tuple[list[int], list[int]]]:
        """(firsts, lasts) of runs covering `most` keys at most together, in order; a longer run is cut."""
        self._fold()
        cut_firsts: list[int] = []
        cut_lasts: list[int] = []
        room = most
        for at in range(0, len(self.firsts), self.FOLD_EVERY):  # as Python numbers a slice at a time
            firsts = self.firsts[at : at + self.FOLD_EVERY].tolist()
            lasts = self.lasts[at : at + self.FOLD_EVERY].tolist()
            for first, last in zip(firsts, lasts, strict=True):
                while first <= last:
                    end = min(last, first + room - 1)
                    cut_firsts.append(first)
                    cut_lasts.append(end)
                    room -= end - first + 1
                    first = end + 1
                    if room == 0:
                        yield cut_firsts, cut_lasts
                        cut_firsts, cut_lasts, room = [], [], most
        if cut_firsts:
            yield cut_firsts, cut_lasts
