"""Expert weights (DHP, Appendix E): for each perturbation, the share of experts who named each
metric as the one its quality issue hurts most. Weights per perturbation sum to 1; with no
answers for a perturbation they are uniform, and that is reported.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class ExpertWeights:
    weights: dict[str, dict[str, float]]  # {perturbation: {metric: weight}}
    counts: dict[str, dict[str, int]]
    uniform: list[str]  # perturbations without answers (uniform weights)


def expert_weights(
    answers: Iterable[tuple[str, str]], perturbations: Sequence[str], metrics: Sequence[str]
) -> ExpertWeights:
    """`answers`: (perturbation, chosen metric), one per expert and perturbation."""
    counts = {p: dict.fromkeys(metrics, 0) for p in perturbations}
    for perturbation, metric in answers:
        if perturbation in counts and metric in counts[perturbation]:
            counts[perturbation][metric] += 1
    weights, uniform = {}, []
    for perturbation, row in counts.items():
        total = sum(row.values())
        if total:
            weights[perturbation] = {m: n / total for m, n in row.items()}
        else:
            uniform.append(perturbation)
            weights[perturbation] = {m: 1 / len(metrics) for m in metrics}
    return ExpertWeights(weights, counts, uniform)


def check_weights(data: object) -> dict[str, dict[str, float]]:
    """Validate a weights document {perturbation: {metric: weight}}: every weight a number ≥ 0, each
    perturbation's summing to more than 0 (they need not sum to exactly 1: `fit_weights` renormalises
    them over the metrics scored). Raises ValueError naming the problem."""
    if not isinstance(data, Mapping) or not data:
        raise ValueError("weights must be a non-empty object {perturbation: {metric: weight}}.")
    checked: dict[str, dict[str, float]] = {}
    for perturbation, row in data.items():
        if not isinstance(row, Mapping) or not row:
            raise ValueError(f"weights for {perturbation!r} must be a non-empty object {{metric: weight}}.")
        values = {}
        for metric, weight in row.items():
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or weight < 0 or math.isnan(weight):
                raise ValueError(f"weight of {perturbation!r}/{metric!r} must be a number ≥ 0, not {weight!r}.")
            values[str(metric)] = float(weight)
        if sum(values.values()) <= 0:
            raise ValueError(f"weights of {perturbation!r} sum to 0: give at least one metric a weight.")
        checked[str(perturbation)] = values
    return checked


def fit_weights(weights: Mapping[str, float] | None, scored: Iterable[str]) -> tuple[dict[str, float] | None, str]:
    """One rule for the web job and `dhp_report` alike: a perturbation's weights restricted to the
    metrics that were scored and renormalised to sum to 1 — or None (uniform weights) when it has
    none, or none on a scored metric. Returns (weights, a sentence saying what was changed, or "")."""
    metrics = sorted(scored)
    if not weights:
        return None, ""
    kept = {m: float(weights.get(m, 0.0)) for m in metrics}
    total = sum(kept.values())
    if total <= 0:
        return None, "none of its weighted metrics was scored, so its weights are uniform"
    fitted = {m: w / total for m, w in kept.items()}
    dropped = sorted(set(weights) - set(metrics))
    notes = [f"weights of unscored metrics left out: {', '.join(dropped)}"] if dropped else []
    if not math.isclose(total, 1.0, abs_tol=1e-12):
        notes.append(f"renormalised from a sum of {total:.6g} to 1")
    return fitted, "; ".join(notes)
