"""Agreement of judges with a reference (ScaleEval, Section 3.3), and position bias.

Verdicts are 1 (first better), 2 (second better), 0 (neither), all relative to one fixed
order of each pair.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar, overload

K = TypeVar("K")


@dataclass(frozen=True)
class Rate:
    hits: int
    total: int

    @property
    def rate(self) -> float | None:
        return self.hits / self.total if self.total else None


def example_agreement(predicted: Sequence[int | None], reference: Sequence[int]) -> Rate:
    """ScaleEval Eq. 2: share of examples where the judge's verdict equals the reference.

    A missing (invalid) verdict counts as a disagreement: it stays in the denominator.
    """
    if len(predicted) != len(reference):
        raise ValueError("predicted and reference verdicts must pair up one to one.")
    return Rate(sum(p == r for p, r in zip(predicted, reference, strict=True)), len(reference))


def judged_pairs(
    verdicts: Mapping[K, int | None], reference: Mapping[K, int]
) -> tuple[list[K], list[int | None], list[int]]:
    """The one definition of which pairs a judge's agreement is computed on, for every page: the pairs
    that have a reference and that the judge has answered (an invalid answer, None, counts as a
    miss, as in ScaleEval's Eq. 2); pairs not judged yet are left out and reported as coverage.
    Returns (ids, predicted, expected) in the reference's order."""
    ids = [i for i in reference if i in verdicts]
    return ids, [verdicts[i] for i in ids], [reference[i] for i in ids]


def coverage(verdicts: Mapping[K, int | None], reference: Mapping[K, int]) -> Rate:
    """How many of the pairs with a reference the judge has answered."""
    return Rate(sum(i in verdicts for i in reference), len(reference))


def mode(verdicts: Iterable[int | None]) -> int | None:
    """The most frequent verdict; None when there is none or the top is tied."""
    counts = Counter(v for v in verdicts if v is not None).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return None
    return counts[0][0]


def system_agreement(predicted: Sequence[int | None], reference: Sequence[int]) -> bool | None:
    """ScaleEval Eq. 5: whether the modes agree; None when either mode is tied."""
    predicted_mode, reference_mode = mode(predicted), mode(reference)
    if predicted_mode is None or reference_mode is None:
        return None
    return predicted_mode == reference_mode


def system_agreement_of_counts(predicted: Sequence[int], reference: Sequence[int]) -> bool | None:
    """ScaleEval Eq. 5 from how often each verdict (0, 1, 2) was given: the same as
    `system_agreement` on the verdicts themselves (an unreadable answer has no count)."""
    predicted_mode, reference_mode = _mode_of_counts(predicted), _mode_of_counts(reference)
    if predicted_mode is None or reference_mode is None:
        return None
    return predicted_mode == reference_mode


def _mode_of_counts(counts: Sequence[int]) -> int | None:
    ranked = sorted(((n, verdict) for verdict, n in enumerate(counts) if n), reverse=True)
    if not ranked or (len(ranked) > 1 and ranked[0][0] == ranked[1][0]):
        return None
    return ranked[0][1]


def by_group(
    groups: Sequence[str], predicted: Sequence[int | None], reference: Sequence[int]
) -> dict[str, tuple[Rate, bool | None]]:
    """Example- and system-level agreement per group (e.g. per scenario), with counts."""
    members: dict[str, list[int]] = {}
    for index, group in enumerate(groups):
        members.setdefault(group, []).append(index)
    return {
        group: (
            example_agreement([predicted[i] for i in idx], [reference[i] for i in idx]),
            system_agreement([predicted[i] for i in idx], [reference[i] for i in idx]),
        )
        for group, idx in sorted(members.items())
    }


@overload
def unswap(verdict: int) -> int: ...
@overload
def unswap(verdict: None) -> None: ...
@overload
def unswap(verdict: int | None) -> int | None: ...
def unswap(verdict: int | None) -> int | None:
    """A verdict given on the swapped order, expressed in the original order."""
    return {1: 2, 2: 1}.get(verdict, verdict) if verdict is not None else None


def majorities(
    verdicts: Iterable[tuple[K, bool, int | None]],
) -> tuple[dict[K, int | None], dict[K, int | None], int]:
    """verdicts: (pair, shown reversed?, verdict in the order shown), one per sample. Returns per
    pair the majority of the samples in the original order, the majority of those in the reversed
    order mapped back to the original order, and the number of invalid (None) answers."""
    same: dict[K, list[int | None]] = {}
    reversed_: dict[K, list[int | None]] = {}
    invalid = 0
    for pair, reversed_order, verdict in verdicts:
        invalid += verdict is None
        (reversed_ if reversed_order else same).setdefault(pair, []).append(
            unswap(verdict) if reversed_order else verdict
        )
    return _modes(same), _modes(reversed_), invalid


def _modes(groups: dict[K, list[int | None]]) -> dict[K, int | None]:
    # One sample per pair is the common case (k = 1): its verdict is its majority.
    return {p: v[0] if len(v) == 1 else mode(v) for p, v in groups.items()}


def position_flip_rate(original_order: Sequence[int | None], swapped_order: Sequence[int | None]) -> Rate:
    """How often a judge's verdict changes when the same pair is shown the other way round."""
    pairs = [
        (a, unswap(b)) for a, b in zip(original_order, swapped_order, strict=True) if a is not None and b is not None
    ]
    return Rate(sum(a != b for a, b in pairs), len(pairs))


# --- agreement between people (ScaleEval, Fig. 4 uses Fleiss' kappa) ------------------------

CATEGORIES = (0, 1, 2)


def percent_agreement(a: Sequence[int | None], b: Sequence[int | None]) -> Rate:
    return Rate(sum(x == y for x, y in zip(a, b, strict=True)), len(a))


def cohen_kappa(a: Sequence[int], b: Sequence[int], categories: Sequence[int] = CATEGORIES) -> float | None:
    """Cohen's kappa of two raters on the same items: (p_o − p_e) / (1 − p_e).

    None with no items; 1.0 when both raters used one and the same category throughout (p_e = 1
    and perfect agreement), and None when p_e = 1 without it (undefined).
    """
    n = len(a)
    if n == 0 or n != len(b):
        return None
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    expected = sum((a.count(c) / n) * (b.count(c) / n) for c in categories)
    if expected == 1:
        return 1.0 if observed == 1 else None
    return (observed - expected) / (1 - expected)


def fleiss_kappa(counts: Sequence[Sequence[int]]) -> float | None:
    """Fleiss' kappa from an items × categories table of rating counts, the same number of raters per item."""
    items = [list(row) for row in counts if sum(row)]
    if not items:
        return None
    raters = sum(items[0])
    if raters < 2 or any(sum(row) != raters for row in items):
        raise ValueError("Fleiss' kappa needs the same number (at least 2) of ratings for every item.")
    n_items = len(items)
    p_items = [(sum(c * c for c in row) - raters) / (raters * (raters - 1)) for row in items]
    p_bar = sum(p_items) / n_items
    shares = [sum(row[j] for row in items) / (n_items * raters) for j in range(len(items[0]))]
    p_e = sum(p * p for p in shares)
    if p_e == 1:
        return 1.0 if p_bar == 1 else None
    return (p_bar - p_e) / (1 - p_e)


def rating_table(ratings: Mapping[object, Sequence[int]], categories: Sequence[int] = CATEGORIES) -> list[list[int]]:
    """{item: [ratings]} → items × categories counts."""
    return [[list(values).count(c) for c in categories] for values in ratings.values()]
