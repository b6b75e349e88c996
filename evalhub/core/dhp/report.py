"""`dhp_report`: DHP statistics from a CSV of scores produced anywhere.

CSV columns: judge, item_id, perturbation, level (C|W|S), metric, original_score,
perturbed_score — one row per item, perturbation and metric, scores already averaged over
repeats. Weights JSON (optional): {perturbation: {metric: weight}} (e.g. a survey export);
perturbations it does not cover get uniform weights, and the report says which. Weights are
restricted to the metrics scored and renormalised — the web job's rule too — and the report
says where that changed them (notes.weights_fitted).
Output, per judge: per perturbation {level, p_by_metric, p, p_ew, D, D_ew, n} (n: the texts tested) and
a summary {D_avg, D_min, D_avg_ew, D_min_ew, D_min_over, min_items}: D_min is taken over the
perturbations with at least min_items texts (D_min_over of them; None when there is none).
"""

from __future__ import annotations

import io
import math
from collections import defaultdict
from typing import Any

import numpy as np

from evalhub.core.dhp.discernment import (
    LEVELS,
    P_FLOOR,
    PerturbationResult,
    perturbation_result,
    summary,
    wilcoxon_greater_many,
)
from evalhub.core.dhp.expert_weights import check_weights, fit_weights
from evalhub.core.files.tables import csv_records

COLUMNS = ("judge", "item_id", "perturbation", "level", "metric", "original_score", "perturbed_score")
MAX_ERRORS = 50


class ReportError(ValueError):
    def __init__(self, errors: list[str]) -> None:
        super().__init__(
            "\n".join(errors[:MAX_ERRORS]) + (f"\n… {len(errors)} problems in all." if len(errors) > MAX_ERRORS else "")
        )
        self.errors = errors


# (judge, perturbation) → {"level", "metrics": {metric: [(o, p)]}, "items": {metric: [item_id]}} — items
# aligned with the pairs, so resampling draws texts, not list positions.
Groups = dict[tuple[str, str], dict[str, Any]]


def read_scores(text: str) -> Groups:
    """The scores file as groups. A clean file is read in one vectorised pass (pandas); any file that
    pass does not accept whole is read row by row, which names every bad line (and accepts what the
    fast pass is too strict for, e.g. spreadsheet-escaped cells)."""
    fast = _read_clean(text)
    return fast if fast is not None else _read_checked(text)


def _read_clean(text: str) -> Groups | None:
    """The groups of a file with nothing to report, or None to leave it to the checked reader."""
    import pandas as pd  # only here: the rest of core does without it

    if "'" in text or "\r" in text:  # spreadsheet-escaped cells, old line ends: the checked reader knows them
        return None
    types = {name: str for name in COLUMNS[:5]} | {"original_score": float, "perturbed_score": float}
    try:
        frame = pd.read_csv(io.StringIO(text), dtype=types, keep_default_na=False, skip_blank_lines=True)
    except (ValueError, pd.errors.ParserError):  # a score that is not a number, a row too long, …
        return None
    if list(frame.columns) != list(dict.fromkeys(frame.columns)) or not set(COLUMNS) <= set(frame.columns):
        return None
    if frame.empty or frame.isna().to_numpy().any():  # a short row: pandas pads it
        return None
    frame = frame[list(COLUMNS)]
    if any(padding in text for padding in (" ,", ", ", " \n", "\n ", "\t")):  # strip, as the checked reader does
        frame = frame.apply(lambda column: column.str.strip() if column.dtype != float else column)
    if (frame[["judge", "item_id", "perturbation", "metric"]] == "").to_numpy().any():
        return None
    if not frame["level"].isin(LEVELS).all():
        return None
    scores = frame[["original_score", "perturbed_score"]].to_numpy(float)
    if not np.isfinite(scores).all():
        return None
    if frame.duplicated(["judge", "item_id", "perturbation", "metric"]).any():
        return None
    if (frame.groupby(["judge", "perturbation"], sort=False)["level"].nunique() > 1).any():
        return None
    # Rows of one (judge, perturbation, metric) together, groups in order of first appearance (as the
    # checked reader makes them): one stable sort, then a slice per group (4,560 groups in a few ms).
    columns = {name: frame[name].to_numpy(object) for name in ("judge", "perturbation", "metric", "item_id", "level")}
    combined = np.zeros(len(frame), dtype=np.int64)
    for name in ("judge", "perturbation", "metric"):
        codes, uniques = pd.factorize(columns[name])
        combined = combined * len(uniques) + codes
    group_of, _ = pd.factorize(combined)  # 0, 1, … in order of first appearance
    order = np.argsort(group_of, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(group_of[order]) != 0])
    original, perturbed = scores[order, 0].tolist(), scores[order, 1].tolist()
    items = columns["item_id"][order].tolist()
    groups: Groups = {}
    for start, end in zip(starts.tolist(), [*starts[1:].tolist(), len(order)], strict=True):
        first = order[start]
        judge, perturbation, metric = (columns[name][first] for name in ("judge", "perturbation", "metric"))
        group = groups.setdefault(
            (judge, perturbation),
            {"level": columns["level"][first], "metrics": defaultdict(list), "items": defaultdict(list)},
        )
        group["metrics"][metric] = list(zip(original[start:end], perturbed[start:end], strict=True))
        group["items"][metric] = items[start:end]
    return groups


def _read_checked(text: str) -> Groups:
    records = csv_records(text)
    first = next(records, None)
    if first is None:
        raise ReportError(["the scores file is empty."])
    if isinstance(first[1], str):
        raise ReportError([f"line {first[0]}: the header cannot be read: {first[1]}."])
    header = first[1]
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise ReportError([f"line 1: missing column(s) {', '.join(missing)}; expected {', '.join(COLUMNS)}."])
    index = {name: header.index(name) for name in COLUMNS}
    groups: Groups = {}
    seen: dict[tuple[str, str, str, str], int] = {}
    level_of: dict[tuple[str, str], tuple[str, int]] = {}
    errors: list[str] = []
    for start, cells in records:
        if isinstance(cells, str):
            errors.append(f"line {start}: the CSV cannot be read here: {cells}.")
            break
        if len(cells) != len(header):
            errors.append(f"line {start}: {len(cells)} cells, but the header has {len(header)}.")
            continue
        row = {name: cells[i].strip() for name, i in index.items()}
        empty = [name for name in ("judge", "item_id", "perturbation", "metric") if not row[name]]
        if empty:
            errors.append(f"line {start}: empty {', '.join(empty)} (every row must name its group).")
            continue
        if row["level"] not in LEVELS:
            errors.append(f"line {start}: unknown level {row['level']!r}; use C, W or S.")
            continue
        try:
            scores = (float(row["original_score"]), float(row["perturbed_score"]))
        except ValueError:
            errors.append(
                f"line {start}: scores must be numbers, got {row['original_score']!r} and {row['perturbed_score']!r}."
            )
            continue
        if not all(math.isfinite(s) for s in scores):
            errors.append(f"line {start}: scores must be finite numbers.")
            continue
        key = (row["judge"], row["item_id"], row["perturbation"], row["metric"])
        if key in seen:
            errors.append(
                f"line {start}: duplicate row for judge {key[0]!r}, item {key[1]!r}, perturbation "
                f"{key[2]!r}, metric {key[3]!r} (first on line {seen[key]})."
            )
            continue
        seen[key] = start
        group_key = (row["judge"], row["perturbation"])
        known = level_of.setdefault(group_key, (row["level"], start))
        if known[0] != row["level"]:
            errors.append(
                f"line {start}: perturbation {row['perturbation']!r} has level {row['level']!r} here but "
                f"{known[0]!r} on line {known[1]}."
            )
            continue
        add_pair(groups, group_key, row["level"], row["metric"], row["item_id"], scores)
    if errors:
        raise ReportError(errors)
    if not groups:
        raise ReportError(["the scores file has no rows."])
    return groups


def add_pair(
    groups: Groups, key: tuple[str, str], level: str, metric: str, item: str | int, pair: tuple[float, float]
) -> None:
    group = groups.setdefault(key, {"level": level, "metrics": defaultdict(list), "items": defaultdict(list)})
    group["metrics"][metric].append(pair)
    group["items"][metric].append(str(item))


def build_report(
    groups: Groups, weights: dict[str, dict[str, float]] | None = None, *, paper_literal: bool = False
) -> dict[str, Any]:
    checked = check_weights(weights) if weights is not None else {}
    p_values = _all_p_values(groups)
    report: dict[str, Any] = {}
    fitted_notes: dict[str, str] = {}
    for (judge, perturbation), group in sorted(groups.items()):
        metrics = sorted(group["metrics"])
        w, note = fit_weights(checked.get(perturbation), metrics)
        if note:
            fitted_notes[perturbation] = note
        n_by_metric = {m: len(group["metrics"][m]) for m in metrics}
        result = perturbation_result(
            group["level"],
            {m: p_values[(judge, perturbation, m)] for m in metrics},
            w,
            paper_literal=paper_literal,
            n=min(n_by_metric.values()),
        )
        entry = report.setdefault(judge, {"perturbations": {}, "uniform_weights_for": []})
        entry["perturbations"][perturbation] = {
            "level": result.level,
            "p_by_metric": result.p_by_metric,
            "p": result.p,
            "p_ew": result.p_ew,
            "D": result.D,
            "D_ew": result.D_ew,
            "n": result.n,
        }
        if w is None:
            entry["uniform_weights_for"].append(perturbation)
    for entry in report.values():
        entry["summary"] = summary(
            {name: PerturbationResult(**values) for name, values in entry["perturbations"].items()}
        )
    return {
        "judges": report,
        "notes": {
            "combination": "1 / Σ 1/p_j (the paper's printed form)" if paper_literal else "harmonic mean M / Σ 1/p_j",
            "p_floor": P_FLOOR,
            "weights": "expert" if weights is not None else "uniform (no weights file)",
            # Weights are restricted to the metrics scored and renormalised (expert_weights.fit_weights).
            "weights_fitted": fitted_notes,
        },
    }


def _all_p_values(groups: Groups) -> dict[tuple[str, str, str], float]:
    """Every (judge, perturbation, metric) test, run in batches of equal length (vectorised)."""
    by_length: dict[int, list[tuple[tuple[str, str, str], list[tuple[float, float]]]]] = defaultdict(list)
    for (judge, perturbation), group in groups.items():
        for metric, pairs in group["metrics"].items():
            by_length[len(pairs)].append(((judge, perturbation, metric), pairs))
    p_values = {}
    for batch in by_length.values():
        scores = np.asarray([pairs for _, pairs in batch], float)  # (tests, items, 2)
        for (key, _), p in zip(batch, wilcoxon_greater_many(scores[:, :, 0], scores[:, :, 1]), strict=True):
            p_values[key] = float(p)
    return p_values


def bootstrap_d_avg(
    groups: Groups,
    weights: dict[str, dict[str, float]] | None = None,
    *,
    resamples: int = 200,
    seed: int = 0,
    level: float = 0.95,
) -> dict[str, dict[str, float]]:
    """Percentile bootstrap intervals of D_avg and D_avg^EW per judge.

    Each resample draws the texts (item ids) of every (judge, perturbation) again with replacement —
    one draw for all its metrics, keyed by item id, so a text's scores stay together — and
    recomputes every test (all resamples in one vectorised batch).
    """
    rng = np.random.default_rng(seed)
    resampled: Groups = {}
    for (judge, perturbation), group in sorted(groups.items()):
        by_item = {
            metric: dict(zip(group["items"][metric], pairs, strict=True)) for metric, pairs in group["metrics"].items()
        }
        items = sorted({item for pairs in by_item.values() for item in pairs})
        for r in range(resamples):
            # One draw of texts for all metrics: a text's scores stay together, whatever the row order,
            # and a metric missing a text simply has no pair for it.
            drawn = [items[i] for i in rng.integers(0, len(items), size=len(items))]
            metrics = {}
            for metric, pairs in sorted(by_item.items()):
                chosen = [pairs[item] for item in drawn if item in pairs]
                if chosen:
                    metrics[metric] = chosen
            resampled[(f"{judge}\x00{r}", perturbation)] = {"level": group["level"], "metrics": metrics}
    report = build_report(resampled, weights)["judges"]
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: {"D_avg": [], "D_avg_ew": []})
    for key, entry in report.items():
        judge = key.split("\x00", 1)[0]
        values[judge]["D_avg"].append(entry["summary"]["D_avg"])
        values[judge]["D_avg_ew"].append(entry["summary"]["D_avg_ew"])
    tail = (1 - level) / 2
    out = {}
    for judge, series in values.items():
        low, high = np.quantile(series["D_avg"], [tail, 1 - tail])
        low_ew, high_ew = np.quantile(series["D_avg_ew"], [tail, 1 - tail])
        out[judge] = {
            "D_avg_low": float(low),
            "D_avg_high": float(high),
            "D_avg_ew_low": float(low_ew),
            "D_avg_ew_high": float(high_ew),
            "resamples": resamples,
        }
    return out
