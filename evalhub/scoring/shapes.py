"""The shapes of a GEM or DHP / YESciEval run's summary: what the runner stores as the job's result
(JSON), and what the results pages, exports and boards read back by key."""

from __future__ import annotations

from typing import Any, TypedDict

from evalhub.core.charts import BarChart, RatingChart


class Column(TypedDict):
    key: str
    label: str


class GemEntry(TypedDict, total=False):
    """One row of a GRE-bench table: a model (or the pooled human baseline) and its estimate."""

    model: str
    name: str
    is_human: bool
    baseline: bool
    pooled: bool
    parameter_count: int | None
    mean: float | None
    low: float | None
    high: float | None
    n: int
    se: float | None
    method: str  # how the interval was made: normal, or bootstrap


class ValidationRow(TypedDict):
    label: str
    kind: str
    section: str
    by_metric: dict[str, dict[str, Any]]  # metric → its MeanDifference as a dict (SMD, interval, p)


class GemSummary(TypedDict):
    variants: list[Column]
    table: dict[str, list[GemEntry]]  # variant → rows, best first
    validation: dict[str, ValidationRow]  # strategy → its row
    validation_metrics: list[Column]
    interval: str
    setup: dict[str, Any]
    pairs: int
    issues: int


class JudgeQuality(TypedDict):
    scores: int
    invalid: int
    reasked: int


class DiscernmentSummary(TypedDict, total=False):
    family: str
    quality: dict[str, JudgeQuality]  # judge → its calls' outcomes
    issues: int
    optimism: dict[str, dict[str, dict[str, dict[str, Any]]]]  # judge → rubric → variant → shift (YESciEval)
    dhp: dict[str, Any]  # evalhub.core.dhp.report's report, with "intervals" (DHP)
    weights_source: str
    failed_judges: dict[str, str]  # a judge that produced no score → its first error


class ResponseScore(TypedDict):
    """A candidate response's GEM score under one variant: its mean PMI over the references it met."""

    variant: str
    response_id: int
    prompt_id: str
    model: str
    model_pk: int
    derived_from: int | None  # the original, for a validation strategy's degraded copy
    strategy: str
    score: float
    references: int
    truncated: bool


class ScorePair(TypedDict):
    """One row of `dhp_report`'s input: an original's and its perturbed copy's mean scores."""

    judge: str
    item_id: int
    perturbation: str
    level: str
    metric: str
    original_score: float
    perturbed_score: float


class RubricShift(TypedDict):
    rubric: str
    subtle: dict[str, Any] | None  # an optimism shift (evalhub.core.yescieval.optimism) as a dict
    extreme: dict[str, Any] | None


class JudgeTable(TypedDict, total=False):
    """What the DHP / YESciEval results page shows for one judge: its table, or why it has none."""

    judge: str
    quality: JudgeQuality | dict[str, int]
    rows: list[dict[str, Any]] | list[RubricShift]  # DHP: a perturbation's report row each
    chart: BarChart | RatingChart
    summary: dict[str, Any]  # DHP: D_avg, D_min and their expert-weighted forms
    interval: dict[str, Any] | None
    uniform: list[str]
    failed: str
