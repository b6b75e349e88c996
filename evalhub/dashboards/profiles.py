"""One model's page: how good it is at answering (as a candidate) and at judging (as a judge),
assembled from the same cached boards the leaderboards show, so the numbers always agree."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from evalhub.dashboards.battles import CONSENSUS, HUMAN, SOURCES, Battle, Filters, load_battles
from evalhub.dashboards.caching import cached
from evalhub.dashboards.gre_bench import gre_bench_board
from evalhub.dashboards.judges import judges_board
from evalhub.dashboards.pairwise import pairwise_board

EXAMPLES = 5


def model_profile(slug: str, filters: Filters, stamp: str) -> dict[str, Any]:
    def compute() -> dict[str, Any]:
        battles = load_battles(stamp, filters.with_judges)
        board = pairwise_board(filters, stamp, battles=battles)
        mine = [b for b in battles if filters.keep(b) and b.for_model(slug)]
        return {
            "rating": next((r for r in board["ratings"] if r["model"] == slug), None),
            "models_rated": len(board["ratings"]),
            "record": _record(slug, mine),
            "by_criterion": _breakdown(slug, mine, lambda b: b.criterion),
            "by_scenario": _breakdown(slug, mine, lambda b: b.scenario),
            "won": _examples(slug, mine, "win"),
            "lost": _examples(slug, mine, "loss"),
            "filtered_out": [] if mine else _filtered_out(slug, filters, stamp, battles),
            "gre_bench": _gre_bench(slug, stamp),
            "judging": [row for row in judges_board(stamp)["judges"] if row["model"] == slug],
        }

    return cached(f"profile:{slug}:{filters.key}", compute, stamp=stamp)


def _filtered_out(slug: str, filters: Filters, stamp: str, battles: list[Battle]) -> list[dict[str, Any]]:
    """The model's battles, per source, that the filters hide: "no battles" must not mean "none at all"."""
    everything = battles if filters.with_judges else load_battles(stamp, with_judges=True)
    counts = Counter(b.source for b in everything if b.for_model(slug))
    return [
        {"source": source, "label": label, "battles": counts[source]}
        for source, label in SOURCES.items()
        if counts[source]
    ]


def _tally(slug: str, battles: list[Battle]) -> dict[str, Any]:
    counts = Counter(b.for_model(slug) for b in battles)
    n = sum(counts.values())
    return {
        "wins": counts["win"],
        "losses": counts["loss"],
        "ties": counts["tie"],
        "battles": n,
        "win_rate": (counts["win"] + 0.5 * counts["tie"]) / n if n else None,
    }


def _record(slug: str, battles: list[Battle]) -> list[dict[str, Any]]:
    by_opponent: dict[str, list[Battle]] = defaultdict(list)
    for b in battles:
        by_opponent[b.model_b if b.model_a == slug else b.model_a].append(b)
    rows = [{"opponent": opponent, **_tally(slug, group)} for opponent, group in by_opponent.items()]
    return sorted(rows, key=lambda r: (-r["battles"], r["opponent"]))


def _breakdown(slug: str, battles: list[Battle], key) -> list[dict[str, Any]]:
    groups: dict[str, list[Battle]] = defaultdict(list)
    for b in battles:
        groups[key(b)].append(b)
    return [{"group": group, **_tally(slug, members)} for group, members in sorted(groups.items())]


def _examples(slug: str, battles: list[Battle], outcome: str) -> list[dict[str, Any]]:
    """Settled debates only (consensus or people): a debate still waiting for adjudication is
    never linked from a page that names the models, so adjudicators stay blind."""
    chosen = [b for b in battles if b.source in (CONSENSUS, HUMAN) and b.for_model(slug) == outcome]
    chosen.sort(key=lambda b: -b.debate)
    return [
        {
            "debate": b.debate,
            "opponent": b.model_b if b.model_a == slug else b.model_a,
            "criterion": b.criterion,
            "scenario": b.scenario,
            "source": b.source,
        }
        for b in chosen[:EXAMPLES]
    ]


def _gre_bench(slug: str, stamp: str) -> list[dict[str, Any]]:
    out = []
    for board in gre_bench_board(stamp):
        for position, row in enumerate(board["rows"], start=1):
            if row["model"] == slug:
                out.append(
                    {
                        "benchmark": board["benchmark"],
                        "evaluation_lm": board["evaluation_lm"],
                        "run": board["run"],
                        "job": board["job"],
                        "position": position,
                        "of": len(board["rows"]),
                        "scores": [
                            {"variant": v["key"], "label": v["label"], **(row["cells"].get(v["key"]) or {})}
                            for v in board["variants"]
                        ],
                    }
                )
    return out
