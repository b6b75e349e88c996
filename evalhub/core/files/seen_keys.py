"""Which rows of a file repeat a key of an earlier row, in a few bytes a row (a file may hold ten
million rows; a dict of the keys themselves costs hundreds of bytes each)."""

from __future__ import annotations

from array import array
from collections.abc import Hashable

import numpy as np


class SeenKeys:
    """Which rows repeat a key of an earlier row, in a few bytes a row: each key is kept as two 64-bit
    hashes (of the key and of it reversed: two different tuples agree in both about once in 2^128) and
    its line, and the repeats are found by sorting the first hash, once every row is in (the few rows
    whose first hash is shared are then compared by both)."""

    SLICE = 1 << 20  # rows looked at together for the shared hashes

    def __init__(self) -> None:
        self.hashes, self.reversed, self.lines = array("q"), array("q"), array("i")

    def add(self, key: tuple[Hashable, ...], line: int) -> None:
        self.hashes.append(hash(key))
        self.reversed.append(hash(key[::-1]))
        self.lines.append(line)

    def repeats(self) -> list[tuple[int, int]]:
        """(line, the first line with its key) for every row whose key an earlier row had."""
        hashes = np.frombuffer(self.hashes, dtype=np.int64)
        # A sorted copy finds the shared hashes, then a pass a slice at a time finds their rows: an
        # argsort's order beside the copy cost 16 bytes a row more at once (160 MB at ten million).
        ordered = np.sort(hashes)
        shared = np.unique(ordered[1:][ordered[1:] == ordered[:-1]])
        del ordered
        rows: list[int] = []  # every row whose first hash another row has
        for at in range(0, len(hashes), self.SLICE):
            rows.extend((np.flatnonzero(np.isin(hashes[at : at + self.SLICE], shared)) + at).tolist())
        first: dict[tuple[int, int], int] = {}
        out = []
        lines, reversed_ = (
            np.frombuffer(self.lines, dtype=self.lines.typecode),
            np.frombuffer(self.reversed, dtype=np.int64),
        )
        for row in sorted(rows, key=lambda i: int(lines[i])):
            key, line = (int(hashes[row]), int(reversed_[row])), int(lines[row])
            if key in first:
                out.append((line, first[key]))
            else:
                first[key] = line
        return out
