"""Pointwise judges measured against people: how well a judge's (or a metric's) scores of responses
follow people's scores of the same responses.

Definitions (each stated where it is computed):
- **Item level** ("summary-level" in SummEval, Fabbri et al. 2021, and G-Eval, Liu et al. 2023): for
  each prompt, the correlation across systems between the judge's scores and people's mean scores of
  those systems' responses; then the mean over prompts. Prompts with fewer than 2 systems scored by
  both, or where either side gives every system the same score, have no correlation and are left out
  (their count is reported).
- **System level**: each system's mean score over the prompts both scored, correlated across systems.
  Its n is the systems it correlates (at least 3 for a value), and it has an interval from
  MIN_SYSTEMS systems up: over three or four systems a rank correlation takes a handful of values,
  and resampling prompts cannot show how little so few systems say.
- Spearman's ρ and Kendall's τ-b are scipy's `spearmanr` and `kendalltau`; intervals are 95 %
  percentile bootstraps over prompts (all of a prompt's responses move together), none below
  MIN_PROMPTS prompts.
- **People among themselves**: Krippendorff's α over the responses (units) people scored, with the
  interval or the ordinal difference function (Krippendorff 2011, "Computing Krippendorff's alpha-
  reliability"), bootstrapped over prompts.
- **As good as a person?**: the judge's item-level ρ with each person, averaged over people, beside
  the people's item-level ρ with each other person, averaged over pairs of people.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.stats import kendalltau, spearmanr

from evalhub.core.statistics.alt_test import NUMERIC, outcomes

MIN_PROMPTS = 10  # below this, a figure shows its value and n, and no interval
MIN_SYSTEMS = 5  # a system-level figure over fewer systems shows its value and n, and no interval
BOOTSTRAP = 1000
SEED = 0
CORRELATIONS = {"spearman": spearmanr, "kendall": kendalltau}


@dataclass(frozen=True)
class Score:
    prompt: Hashable
    system: str
    rater: str
    person: bool  # a person's score (people's mean is the reference), else a judge's or a metric's
    score: float
    criterion: str = "overall"


@dataclass(frozen=True)
class Estimate:
    value: float | None
    low: float | None = None
    high: float | None = None
    n: int = 0  # prompts (or units, or systems for a system-level figure) it rests on
    unit: str = "prompts"

    def as_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "ci": None if self.low is None else [self.low, self.high],
            "n": self.n,
            "unit": self.unit,
        }


Table = dict[Hashable, dict[str, float]]  # prompt → system → score


def _correlation(kind: str, x: Sequence[float], y: Sequence[float]) -> float | None:
    if len(x) < 2 or len(set(x)) < 2 or len(set(y)) < 2:
        return None  # undefined: scipy would return NaN with a warning
    return float(CORRELATIONS[kind](x, y)[0])


def _per_prompt(kind: str, judge: Table, people: Table, prompts: Sequence[Hashable]) -> list[float | None]:
    out = []
    for prompt in prompts:
        systems = sorted(set(judge.get(prompt, {})) & set(people.get(prompt, {})))
        out.append(_correlation(kind, [judge[prompt][s] for s in systems], [people[prompt][s] for s in systems]))
    return out


def _systems(judge: Table, people: Table, prompts: Sequence[Hashable]) -> int:
    return len({system for prompt in prompts for system in set(judge.get(prompt, {})) & set(people.get(prompt, {}))})


def _system_level(kind: str, judge: Table, people: Table, prompts: Sequence[Hashable]) -> float | None:
    sums: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])
    for prompt in prompts:
        for system in set(judge.get(prompt, {})) & set(people.get(prompt, {})):
            entry = sums[system]
            entry[0] += judge[prompt][system]
            entry[1] += people[prompt][system]
            entry[2] += 1
    systems = sorted(sums)
    if len(systems) < 3:
        return None
    return _correlation(kind, [sums[s][0] / sums[s][2] for s in systems], [sums[s][1] / sums[s][2] for s in systems])


def _percentile_interval(values: Sequence[float | None], n: int) -> tuple[float | None, float | None]:
    finite = [v for v in values if v is not None and np.isfinite(v)]
    if n < MIN_PROMPTS or len(finite) < 0.5 * len(values) or not finite:
        return None, None
    low, high = np.percentile(finite, [2.5, 97.5])
    return float(low), float(high)


def correlations(judge: Table, people: Table, resamples: int = BOOTSTRAP, seed: int = SEED) -> dict[str, Any]:
    """Item- and system-level Spearman and Kendall between a judge's table and people's mean table."""
    prompts = sorted(set(judge) & set(people), key=str)
    rng = np.random.default_rng(seed)
    draws = [rng.integers(0, len(prompts), len(prompts)) for _ in range(resamples)] if prompts else []
    out: dict[str, Any] = {"prompts": len(prompts)}
    for kind in CORRELATIONS:
        per_prompt = _per_prompt(kind, judge, people, prompts)
        defined = np.array([np.nan if v is None else v for v in per_prompt])
        usable = int(np.isfinite(defined).sum())
        item = float(np.nanmean(defined)) if usable else None
        item_draws = [float(np.nanmean(defined[d])) if np.isfinite(defined[d]).any() else None for d in draws]
        low, high = _percentile_interval(item_draws, usable) if item is not None else (None, None)
        out[f"item_{kind}"] = Estimate(item, low, high, usable)
        system, systems = _system_level(kind, judge, people, prompts), _systems(judge, people, prompts)
        low = high = None
        if system is not None and systems >= MIN_SYSTEMS:
            system_draws = [_system_level(kind, judge, people, [prompts[i] for i in d]) for d in draws]
            low, high = _percentile_interval(system_draws, len(prompts))
        out[f"system_{kind}"] = Estimate(system, low, high, systems, "systems")
    out["prompts_without_item_correlation"] = len(prompts) - out["item_spearman"].n
    return out


# --- Krippendorff's alpha with interval and ordinal differences --------------------------------------


def _squared_differences(values: np.ndarray, totals: np.ndarray, metric: str) -> np.ndarray:
    if metric == "interval":
        return np.asarray((values[:, None] - values[None, :]) ** 2)
    if metric == "ordinal":  # (Σ_{g between c and k} n_g − (n_c + n_k) / 2)², Krippendorff 2011
        cumulative = np.cumsum(totals)
        low = np.minimum.outer(np.arange(len(values)), np.arange(len(values)))
        high = np.maximum.outer(np.arange(len(values)), np.arange(len(values)))
        between = cumulative[high] - np.where(low > 0, cumulative[low - 1], 0)
        return np.asarray((between - (totals[:, None] + totals[None, :]) / 2) ** 2)
    if metric == "nominal":
        return 1.0 - np.eye(len(values))
    raise ValueError(f"metric must be nominal, ordinal or interval, not {metric!r}")


def _alpha(counts: np.ndarray, values: np.ndarray, metric: str) -> float | None:
    """α = 1 − D_o / D_e from a units × values table of how many raters gave each value."""
    per_unit = counts.sum(axis=1)
    counts = counts[per_unit >= 2]
    if not len(counts):
        return None
    m = counts.sum(axis=1)
    k = counts.shape[1]
    coincidence = (
        (counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(k)) / (m - 1)[:, None, None]
    ).sum(axis=0)
    totals = coincidence.sum(axis=1)
    n = totals.sum()
    delta = _squared_differences(values, totals, metric)
    expected = (np.outer(totals, totals) * delta).sum() / (n * (n - 1))
    if expected == 0:
        return None
    return float(1 - ((coincidence * delta).sum() / n) / expected)


def krippendorff_alpha(
    units: Sequence[Sequence[float]],
    metric: str = "interval",
    clusters: Sequence[Hashable] | None = None,
    resamples: int = BOOTSTRAP,
    seed: int = SEED,
) -> Estimate:
    """α over units (each: the scores people gave one response; missing ratings simply absent), with a
    bootstrap interval over `clusters` (a unit's prompt; each unit its own if None)."""
    values = np.array(sorted({v for unit in units for v in unit}), dtype=float)
    position = {v: i for i, v in enumerate(values)}
    counts = np.zeros((len(units), len(values)))
    for row, unit in enumerate(units):
        for v in unit:
            counts[row, position[v]] += 1
    value = _alpha(counts, values, metric)
    groups = list(clusters) if clusters is not None else list(range(len(units)))
    names = sorted(set(groups), key=str)
    members = defaultdict(list)
    for row, group in enumerate(groups):
        members[group].append(row)
    if value is None or len(names) < MIN_PROMPTS:
        return Estimate(value, n=len(names))
    rng = np.random.default_rng(seed)
    draws = []
    for _ in range(resamples):
        rows = [row for pick in rng.integers(0, len(names), len(names)) for row in members[names[pick]]]
        draws.append(_alpha(counts[rows], values, metric))
    low, high = _percentile_interval(draws, len(names))
    return Estimate(value, low, high, len(names))


# --- the report ----------------------------------------------------------------------------------------


def _tables(scores: Iterable[Score]) -> tuple[dict[str, Table], dict[str, Table]]:
    """Per rater, prompt → system → mean score (repeats averaged): people's and judges'."""
    sums: dict[tuple[bool, str], dict[Hashable, dict[str, list[float]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for s in scores:
        sums[(s.person, s.rater)][s.prompt][s.system].append(s.score)
    people: dict[str, Table] = {}
    judges: dict[str, Table] = {}
    for (person, rater), table in sums.items():
        means = {prompt: {system: float(np.mean(v)) for system, v in row.items()} for prompt, row in table.items()}
        (people if person else judges)[rater] = means
    return people, judges


def _mean_of_people(people: dict[str, Table]) -> Table:
    cells: dict[Hashable, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for table in people.values():
        for prompt, row in table.items():
            for system, score in row.items():
                cells[prompt][system].append(score)
    return {prompt: {system: float(np.mean(v)) for system, v in row.items()} for prompt, row in cells.items()}


def _mean_item_rho(a: Table, b: Table) -> float | None:
    prompts = sorted(set(a) & set(b), key=str)
    defined = [v for v in _per_prompt("spearman", a, b, prompts) if v is not None]
    return float(np.mean(defined)) if defined else None


def criterion_report(scores: Sequence[Score], resamples: int = BOOTSTRAP, seed: int = SEED) -> dict[str, Any]:
    people, judges = _tables(scores)
    reference = _mean_of_people(people)
    units = [
        (prompt, [table[prompt][system] for table in people.values() if system in table.get(prompt, {})])
        for prompt, row in reference.items()
        for system in row
    ]
    among = {
        metric: krippendorff_alpha([u for _, u in units], metric, [p for p, _ in units], resamples, seed).as_json()
        for metric in ("interval", "ordinal")
    }
    names = sorted(people)
    between_people = [
        rho
        for i, a in enumerate(names)
        for b in names[i + 1 :]
        if (rho := _mean_item_rho(people[a], people[b])) is not None
    ]
    flat_people = {person: _flat(table) for person, table in people.items()}
    report: dict[str, Any] = {
        "people": len(people),
        "responses_scored_by_people": sum(len(row) for row in reference.values()),
        "people_alpha": among,
        "people_mean_item_spearman_with_each_other": float(np.mean(between_people)) if between_people else None,
        "judges": {},
    }
    for judge, table in sorted(judges.items()):
        found = correlations(table, reference, resamples, seed)
        with_each = [rho for person in names if (rho := _mean_item_rho(table, people[person])) is not None]
        scores_given = [v for row in table.values() for v in row.values()]
        report["judges"][judge] = {
            **{key: value.as_json() if isinstance(value, Estimate) else value for key, value in found.items()},
            "mean_item_spearman_with_each_person": float(np.mean(with_each)) if with_each else None,
            "score_distribution": {str(k): v for k, v in sorted(_counts(scores_given).items())},
            # The alternative annotator test's counts per person (judge better, tied, person better) on the
            # responses they scored: the page runs the test at the epsilon it is asked for.
            "alt_test_outcomes": {
                person: list(counts) for person, counts in outcomes(flat_people, _flat(table), NUMERIC).items()
            },
        }
    return report


def _flat(table: Table) -> dict[Hashable, float]:
    return {(prompt, system): score for prompt, row in table.items() for system, score in row.items()}


def _counts(values: list[float]) -> dict[float, int]:
    out: dict[float, int] = defaultdict(int)
    for v in values:
        out[round(v, 3)] += 1
    return dict(out)


def meta_evaluation(scores: Sequence[Score], resamples: int = BOOTSTRAP, seed: int = SEED) -> dict[str, Any]:
    """The report per criterion (see the module's docstring for every definition)."""
    by_criterion: dict[str, list[Score]] = defaultdict(list)
    for s in scores:
        by_criterion[s.criterion].append(s)
    return {
        "criteria": {name: criterion_report(found, resamples, seed) for name, found in sorted(by_criterion.items())},
        "min_prompts_for_interval": MIN_PROMPTS,
        "min_systems_for_interval": MIN_SYSTEMS,
    }


# --- the scores file ---------------------------------------------------------------------------------

SCORE_COLUMNS = ("prompt_id", "system", "rater", "rater_kind", "score")
OPTIONAL_COLUMNS = ("criterion",)
PERSON_KINDS = {"person": True, "human": True, "judge": False, "model": False, "metric": False}


class ScoresError(ValueError):
    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors[:50]) + (f"\n… {len(errors)} problems in all." if len(errors) > 50 else ""))
        self.errors = errors


def read_scores(text: str) -> list[Score]:
    """CSV with `prompt_id, system, rater, rater_kind (person | judge), score[, criterion]`, one row per
    score (repeats of a rater are averaged); every bad line is named and nothing is returned."""
    from evalhub.core.files.tables import csv_records

    records = csv_records(text)
    first = next(records, None)
    if first is None or isinstance(first[1], str):
        raise ScoresError(["the scores file is empty or its header cannot be read."])
    header = [cell.strip() for cell in first[1]]
    missing = [c for c in SCORE_COLUMNS if c not in header]
    if missing:
        raise ScoresError([f"line 1: missing column(s) {', '.join(missing)}; expected {', '.join(SCORE_COLUMNS)}."])
    index = {name: header.index(name) for name in (*SCORE_COLUMNS, *OPTIONAL_COLUMNS) if name in header}
    scores, errors = [], []
    for line, cells in records:
        if isinstance(cells, str):
            errors.append(f"line {line}: {cells}.")
            break
        if len(cells) != len(header):
            errors.append(f"line {line}: {len(cells)} cells, but the header has {len(header)}.")
            continue
        row = {name: cells[i].strip() for name, i in index.items()}
        empty = [name for name in ("prompt_id", "system", "rater") if not row[name]]
        kind = PERSON_KINDS.get(row["rater_kind"].lower())
        try:
            value = float(row["score"])
        except ValueError:
            value = float("nan")
        if empty:
            errors.append(f"line {line}: empty {', '.join(empty)}.")
        elif kind is None:
            errors.append(f"line {line}: rater_kind must be person or judge, not {row['rater_kind']!r}.")
        elif not np.isfinite(value):
            errors.append(f"line {line}: the score must be a finite number, not {row['score']!r}.")
        else:
            criterion = row.get("criterion") or "overall"
            scores.append(Score(row["prompt_id"], row["system"], row["rater"], kind, value, criterion))
    if errors:
        raise ScoresError(errors)
    if not scores:
        raise ScoresError(["the scores file has no rows."])
    return scores
