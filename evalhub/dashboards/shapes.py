"""The shapes of what the boards hand to their views and templates (and cache, and export).

TypedDicts, not classes: the values are cached and exported as they are, and templates and
exports read them by key; the type checker holds every producer and reader to these fields.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypedDict

from evalhub.core.statistics.bradley_terry import RatingDict

# --- the pairwise board ------------------------------------------------------------------


RatingRow = RatingDict  # evalhub.core.statistics.bradley_terry's: Rating.as_dict()


class MatrixCell(TypedDict):
    opponent: str
    games: float
    win_rate: float | None
    beats: float | None
    wins: int  # the row model's battles won against the column model
    losses: int
    ties: int


class MatrixRow(TypedDict):
    model: str
    cells: list[MatrixCell]


class StyleControl(TypedDict):
    coefficients: dict[str, float]
    battles: int
    rounds: int
    skipped: dict[str, str]  # model → why it has no style-controlled rating (too few battles in its group)


class FilterOptions(TypedDict):
    criteria: list[str]
    scenarios: list[str]
    benchmarks: list[str]
    responses: list[str]
    sources: list[str]
    judges: list[tuple[str, list[tuple[str, str]]]]  # by group: (group, [(judge id, name)])


class PairwiseBoard(TypedDict):
    ratings: list[RatingRow]
    groups: int
    style: StyleControl | None
    matrix: list[MatrixRow]
    battles: int
    by_source: dict[str, int]
    rounds: int
    interval: str  # "bootstrap" or "sandwich"
    reweighted: bool
    ridge: float
    confidence: float
    options: FilterOptions
    items: int  # the independent items the intervals resample (0: every battle its own)
    shared_items: int  # of those, pairs several people (or judges) labelled, resampled whole
    # What the board is computed from (its counts, items and settings), where that says all of it (not a
    # style-controlled board, which reads the texts): a page renders the same board once, whatever else moved.
    digest: str | None


# --- the judges board ---------------------------------------------------------------------


class RateCell(TypedDict):
    rate: float
    hits: int
    total: int


class SystemAgreement(TypedDict):
    agrees: int
    runs: int


class Agreement(TypedDict):
    example: RateCell | None
    coverage: RateCell | None
    system: SystemAgreement | None


class CallCounts(TypedDict):
    total: int
    judge: int
    agent: int
    scoring: int


class JudgeRow(TypedDict):
    judge: str
    model: str | None
    dhp: list[dict[str, Any]]  # a finished DHP job's summary per judge (its report's own keys)
    optimism: list[dict[str, Any]]  # a finished YESciEval job's optimism report per judge
    agreement: dict[str, Agreement]  # "plain" / "privileged"
    robustness: dict[str, RateCell | None]  # per criteria prompt variant
    flips: RateCell | None
    usage: dict[str, dict[str, Any]]  # "judge" / "agent" / "scoring": calls, tokens, latency
    calls: CallCounts | None


class LayoutRow(TypedDict, total=False):
    variant: str
    criterion: str
    scenario: str
    cells: list[RateCell | None]
    overall: bool


class AgreementLayout(TypedDict):
    judges: list[str]
    rows: list[LayoutRow]


class AblationRow(TypedDict):
    """One judge with one set of privileged sources, over its runs (seeds): the privileged-information
    paper's Table 4 layout, with agreement where it has Spearman's ρ."""

    judge: str
    sources: list[str]
    runs: int
    pairs: int  # pairs judged over all its runs
    mean: float
    sd: float | None  # over runs (n − 1); None for one run
    by_seed: list[tuple[int, float, int]]  # (seed, agreement, pairs) per run


class JudgesBoard(TypedDict):
    judges: list[JudgeRow]
    table4: AgreementLayout
    table5: AgreementLayout
    variants: list[str]
    ablation: list[AblationRow]


# --- GRE-bench ----------------------------------------------------------------------------


class ScoreCell(TypedDict):
    mean: float | None
    low: float | None
    high: float | None
    n: int | None


class GreRow(TypedDict, total=False):
    model: str
    label: str
    name: str  # the display name, added per request (with_names)
    baseline: bool
    cells: dict[str, ScoreCell]
    cell_list: list[ScoreCell | None]


class VariantColumn(TypedDict):
    key: str
    label: str


class GreBoard(TypedDict, total=False):
    run: int
    job: int
    benchmark: str
    benchmark_slug: str
    evaluation_lm: str
    interval: str
    setup: dict[str, Any]
    finished_at: datetime | None
    older_runs: int
    variants: list[VariantColumn]
    rows: list[GreRow]
    charts: list[dict[str, Any]]  # added per request (with_names): one interval chart per variant


# --- a model's page -----------------------------------------------------------------------


class Tally(TypedDict):
    wins: int
    losses: int
    ties: int
    battles: int
    win_rate: float | None


class OpponentRecord(Tally):
    opponent: str


class GroupRecord(Tally):
    group: str


class ExampleDebate(TypedDict):
    debate: int
    opponent: str
    criterion: str
    scenario: str
    source: str


class HiddenBattles(TypedDict):
    source: str
    label: str
    battles: int


class GrePlace(TypedDict):
    benchmark: str
    evaluation_lm: str
    run: int
    job: int
    position: int
    of: int
    scores: list[dict[str, Any]]  # a variant's key and label, and its ScoreCell


class ModelRecord(TypedDict):
    """A model's page beside its rating: what the counts and runs say."""

    record: list[OpponentRecord]
    by_criterion: list[GroupRecord]
    by_scenario: list[GroupRecord]
    won: list[ExampleDebate]
    lost: list[ExampleDebate]
    filtered_out: list[HiddenBattles]
    gre_bench: list[GrePlace]
    judging: list[JudgeRow]


class ModelProfile(ModelRecord):
    rating: RatingRow | None
    models_rated: int
    rating_computed_at: datetime | None  # when its board was computed, where that was before the latest data
    rating_pending: bool  # no board kept yet: a worker computes the first
