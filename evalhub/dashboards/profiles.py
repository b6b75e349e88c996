"""One model's page: how good it is at answering (as a candidate) and at judging (as a judge),
assembled from the same cached boards the leaderboards show, so the numbers always agree."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable

from django.db.models import F, Q

from evalhub.catalog.models import IMPORTED_VARIANT
from evalhub.dashboards.counts import battle_counts
from evalhub.dashboards.gre_bench import gre_bench_board
from evalhub.dashboards.judges import judges_board
from evalhub.dashboards.pairwise import board_state
from evalhub.dashboards.shapes import (
    ExampleDebate,
    GrePlace,
    GroupRecord,
    HiddenBattles,
    ModelProfile,
    ModelRecord,
    OpponentRecord,
    Tally,
)
from evalhub.debates.models import Debate, DebateStatus, Winner
from evalhub.reads.battles import CONSENSUS, HUMAN, SOURCES, Filters
from evalhub.reads.caching import cached
from evalhub.tallies.models import BattleCount

EXAMPLES = 5


def model_profile(slug: str, filters: Filters, stamp: str) -> ModelProfile:
    """The model's page: its rating from the board the leaderboard shows (the kept one, marked with its
    age while a worker computes the current one), and its record, breakdowns and examples."""
    state = board_state(filters, stamp)
    ratings = state.board["ratings"] if state.board is not None else []
    counted: ModelRecord = cached(f"profile:{slug}:{filters.key}", lambda: _profile(slug, filters, stamp), stamp=stamp)
    return {
        **counted,
        "rating": next((r for r in ratings if r["model"] == slug), None),
        "models_rated": len(ratings),
        "rating_computed_at": None if state.current else state.computed_at,
        "rating_pending": state.pending,
    }


def _profile(slug: str, filters: Filters, stamp: str) -> ModelRecord:
    """What the page shows beside the rating: counted battles and runs, a few queries whatever their size."""
    mine = battle_counts(filters, model=slug, stamp=stamp)
    return {
        "record": _record(slug, mine),
        "by_criterion": _breakdown(slug, mine, lambda row: row.criterion),
        "by_scenario": _breakdown(slug, mine, lambda row: row.scenario),
        "won": _examples(slug, filters, "win"),
        "lost": _examples(slug, filters, "loss"),
        "filtered_out": [] if _tally(slug, mine)["battles"] else _filtered_out(slug),
        "gre_bench": _gre_bench(slug, stamp),
        "judging": [row for row in judges_board(stamp)["judges"] if row["model"] == slug],
    }


def _filtered_out(slug: str) -> list[HiddenBattles]:
    """The model's battles, per source, that the filters hide: "no battles" must not mean "none at all"."""
    counts: Counter[str] = Counter()
    for row in battle_counts(Filters(sources=tuple(SOURCES)), model=slug):
        counts[row.source] += row.wins_a + row.wins_b + row.ties
    return [
        {"source": source, "label": label, "battles": counts[source]}
        for source, label in SOURCES.items()
        if counts[source]
    ]


def _tally(slug: str, rows: list[BattleCount]) -> Tally:
    wins = sum(row.wins_a if row.model_a == slug else row.wins_b for row in rows)
    losses = sum(row.wins_b if row.model_a == slug else row.wins_a for row in rows)
    ties = sum(row.ties for row in rows)
    n = wins + losses + ties
    return {
        "wins": wins,
        "losses": losses,
        "ties": ties,
        "battles": n,
        "win_rate": (wins + 0.5 * ties) / n if n else None,
    }


def _record(slug: str, rows: list[BattleCount]) -> list[OpponentRecord]:
    by_opponent: dict[str, list[BattleCount]] = defaultdict(list)
    for row in rows:
        by_opponent[row.model_b if row.model_a == slug else row.model_a].append(row)
    record = [OpponentRecord(opponent=opponent, **_tally(slug, group)) for opponent, group in by_opponent.items()]
    return sorted((r for r in record if r["battles"]), key=lambda r: (-r["battles"], r["opponent"]))


def _breakdown(slug: str, rows: list[BattleCount], key: Callable[[BattleCount], str]) -> list[GroupRecord]:
    groups: dict[str, list[BattleCount]] = defaultdict(list)
    for row in rows:
        groups[key(row)].append(row)
    breakdown = [GroupRecord(group=group, **_tally(slug, members)) for group, members in sorted(groups.items())]
    return [row for row in breakdown if row["battles"]]


def _examples(slug: str, filters: Filters, outcome: str) -> list[ExampleDebate]:
    """The latest settled debates it won (or lost) under the filters, by debate consensus or by
    people only: a debate still waiting for adjudication is never linked from a page that names the
    models, so adjudicators stay blind. Five rows, whatever the number of debates."""
    statuses = [
        status
        for source, status in ((CONSENSUS, DebateStatus.CONSENSUS), (HUMAN, DebateStatus.ADJUDICATED))
        if source in filters.sources
    ]
    if not statuses or filters.judge:  # a panel's or people's settled debates are no one judge's verdicts
        return []
    as_a, as_b = Q(response_a__model__slug=slug), Q(response_b__model__slug=slug)
    won = (as_a & Q(winner=Winner.A)) | (as_b & Q(winner=Winner.B))
    lost = (as_a & Q(winner=Winner.B)) | (as_b & Q(winner=Winner.A))
    debates = Debate.objects.filter(won if outcome == "win" else lost, status__in=statuses).exclude(
        response_a__model=F("response_b__model")
    )
    if filters.criterion:
        debates = debates.filter(run__criterion__slug=filters.criterion)
    if filters.scenario:
        blank = Q(prompt__category="") | Q(prompt__category__isnull=True)
        debates = debates.filter(blank if filters.scenario == "—" else Q(prompt__category=filters.scenario))
    if filters.benchmark:
        debates = debates.filter(run__benchmark__slug=filters.benchmark)
    if filters.responses:
        variants = ["", IMPORTED_VARIANT] if filters.responses == IMPORTED_VARIANT else [filters.responses]
        debates = debates.filter(run__variant__in=variants)  # a run on imported responses has no variant
    fields = (
        "id",
        "status",
        "response_a__model__slug",
        "response_b__model__slug",
        "run__criterion__slug",
        "prompt__category",
    )
    return [
        {
            "debate": row["id"],
            "opponent": row["response_b__model__slug"]
            if row["response_a__model__slug"] == slug
            else row["response_a__model__slug"],
            "criterion": row["run__criterion__slug"],
            "scenario": row["prompt__category"] or "—",
            "source": CONSENSUS if row["status"] == DebateStatus.CONSENSUS else HUMAN,
        }
        for row in debates.order_by("-id").values(*fields)[:EXAMPLES]
    ]


def _gre_bench(slug: str, stamp: str) -> list[GrePlace]:
    out: list[GrePlace] = []
    for board in gre_bench_board(stamp):
        for position, row in enumerate(board["rows"], start=1):
            if row["model"] == slug:
                out.append(
                    GrePlace(
                        benchmark=board["benchmark"],
                        evaluation_lm=board["evaluation_lm"],
                        run=board["run"],
                        job=board["job"],
                        position=position,
                        of=len(board["rows"]),
                        scores=[
                            {"variant": v["key"], "label": v["label"], **(row["cells"].get(v["key"]) or {})}
                            for v in board["variants"]
                        ],
                    )
                )
    return out
