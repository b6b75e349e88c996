"""The pairwise board's drawn part — its ratings table, chart and three matrices of every model (about
1.5 CPU-s at 200 models) — rendered once per board and set of model names and kept: by the worker that
computed the board, so the first page after it shows it at once, or else by the first page that needs it.
Its links carry the board's own filters, not the query of whichever request drew it."""

from __future__ import annotations

import hashlib

from django.core.cache import cache
from django.template.loader import render_to_string

from evalhub.catalog.models import LanguageModel
from evalhub.dashboards import pairwise
from evalhub.dashboards.counts import sources_with_battles
from evalhub.dashboards.shapes import PairwiseBoard
from evalhub.reads.battle_filters import filters_query
from evalhub.reads.battles import SOURCES, Filters
from evalhub.reads.caching import cached_forever


def model_names() -> dict[str, str]:
    return dict(LanguageModel.objects.values_list("slug", "display_name"))


def names_digest(names: dict[str, str]) -> str:
    """Part of every drawn section's key: a renamed model shows at once."""
    return hashlib.sha1(repr(sorted(names.items())).encode(), usedforsecurity=False).hexdigest()[:12]


def drawn_board(filters: Filters, board: PairwiseBoard, stamp: str, names: dict[str, str]) -> str:
    """The board's HTML, kept per board (its digest: counts, items, settings) and names; an empty board, or
    a style-controlled one (whose texts its digest does not see), per `stamp` of the data it was computed from."""
    drawn = board["digest"] if board["digest"] and board["battles"] else stamp
    key = f"html:pairwise:{filters.key}:{drawn}-{names_digest(names)}"
    return cached_forever(key, lambda: _render(filters, board, names))


def draw_kept(filters: Filters) -> None:
    """A worker's last step after computing a board: draw it for the pages to come."""
    kept = cache.get(pairwise.kept_key(filters))
    if kept is not None:
        drawn_board(filters, kept["board"], kept["stamp"], model_names())


def unticked_with_battles(filters: Filters) -> list[str]:
    """For a board with no battle: the sources it does not count that have some under its other filters."""
    present = sources_with_battles(filters)
    return [source for source in SOURCES if source in present and source not in filters.sources]


def _render(filters: Filters, board: PairwiseBoard, names: dict[str, str]) -> str:
    context = {
        "filters": filters,
        "query": filters_query(filters),
        "sources": SOURCES,
        "board": board,
        "unticked_with_battles": [] if board["battles"] else unticked_with_battles(filters),
        "chart": pairwise.rating_chart(board["ratings"], names, style=board["style"] is not None),
        "names": names,
    }
    return render_to_string("dashboards/_pairwise_board.html", context)
