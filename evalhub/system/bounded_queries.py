"""Queries whose parameters stay bounded however large the file or set they come from.

SQLite refuses a statement with more variables than its build allows (32,766 by default since 3.32,
250,000 in Debian's), so `filter(x__in=every_id_in_the_file)` fails once a file is large enough — after
minutes of work, importing nothing. Every `__in` over values a file or a job brought asks through here.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

from django.db.models import QuerySet

PER_QUERY = 5000
Value = TypeVar("Value")
Row = TypeVar("Row")


def in_parts(values: Iterable[Value]) -> Iterator[Sequence[Value]]:
    """The distinct values, in their first order, PER_QUERY at a time."""
    return in_slices(list(dict.fromkeys(values)))


def in_slices(items: Sequence[Value]) -> Iterator[Sequence[Value]]:
    """The items in order, PER_QUERY at a time: an import's records, each slice asked about in one query,
    so that what is read back for them stays bounded too."""
    for start in range(0, len(items), PER_QUERY):
        yield items[start : start + PER_QUERY]


def where_in(queryset: QuerySet[Any, Row], field: str, values: Iterable[object]) -> Iterator[Row]:
    """The rows of `queryset` (models, or `values_list` tuples) whose `field` is one of `values`, in
    queries of at most PER_QUERY values each."""
    for part in in_parts(values):
        yield from queryset.filter(**{f"{field}__in": part})
