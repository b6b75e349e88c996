"""The shapes of a generation run's analysis (the results page, the model page's hint tiers) and of
the summary its job keeps."""

from __future__ import annotations

from typing import Any, TypedDict

from evalhub.core.privileged.tiers import Cell, Separability


class TierRow(TypedDict):
    model: str
    overall: Cell | None
    cells: list[Cell | None]


class TierTableRows(TypedDict):
    """The layout of the privileged-information paper's Table 3: Overall, then one column per tier."""

    tiers: list[str]
    rows: list[TierRow]
    separability: list[Separability | None]


class TierAnalysis(TypedDict):
    accuracy: TierTableRows | None
    win_rate: TierTableRows | None
    battles: dict[str, int]  # source → pairs decided against the anchor
    counts: dict[tuple[str, int], int]  # (model, tier) → responses
    stale_hints: int


class ModelTierRows(TypedDict):
    run: Any  # the GenerationRun (its benchmark, template and anchor name the table)
    tiers: list[str]
    accuracy: TierRow | None
    win_rate: TierRow | None


class GenerationSummary(TypedDict):
    responses: dict[str, int]  # "model · tier" → responses
    usage: dict[str, int | float]
    accuracy: dict[str, dict[str, Any]]  # "model · tier" → its cell as a dict
