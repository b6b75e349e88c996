"""A judge version against its parent on the pairs both judged: the paired difference in agreement with
people and in κ (evalhub.core.alignment.paired), on held-out pairs only where a version was improved on
people's labels."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from evalhub.alignment.labels import PairVerdicts, pair_verdicts
from evalhub.alignment.models import JudgeVersion, VersionRun
from evalhub.catalog.queries import read_splits
from evalhub.core.alignment.paired import (
    ORDER_CONSISTENCY,
    PICKS_ITSELF,
    PICKS_LONGER,
    PairedDifference,
    paired_differences,
    paired_rate_differences,
)
from evalhub.core.judge_lab.measures import ABSENT, FIRST, SECOND
from evalhub.reads.judged_pairs import SCORING, admitted
from evalhub.reads.spec_names import spec_models


@dataclass(frozen=True)
class VersionComparison:
    reference: str  # the debate run whose pairs both versions judged
    before: str
    after: str
    held_out_only: bool
    differences: dict[str, PairedDifference]


def compare_runs(before: VersionRun, after: VersionRun, found: PairVerdicts | None = None) -> VersionComparison:
    """`found`: the reference's benchmark and criterion read with both versions' verdicts (read here if None)."""
    reference = after.judge_run.reference
    benchmark, criterion = reference.benchmark.slug, reference.criterion.slug
    names = str(before.version), str(after.version)
    found = found or pair_verdicts(benchmark, criterion, list(names))
    first, second = found.judges[names[0]], found.judges[names[1]]
    held_out_only = after.version.aligned or before.version.aligned
    # The splits the versions were improved on (as a version records it, never looked up again by name):
    # both are scored where each split holds the pair out.
    splits = read_splits(v.split_id for v in (before.version, after.version) if v.aligned and v.split_id).values()
    scored = [all(admitted(split, found.prompt(row), SCORING) for split in splits) for row in range(len(found.items))]
    rows = [
        row
        for row in range(len(found.items))
        if found.people[row] != ABSENT and first[row] != ABSENT and second[row] != ABSENT and scored[row]
    ]
    chosen = np.array(rows, dtype=int)
    differences = paired_differences(
        found.people[chosen], first[chosen], second[chosen], [found.prompt(row) for row in rows]
    )
    # Order consistency and the pull of length: over the pairs the versions judged (people or not).
    judged = [row for row in range(len(found.items)) if (first[row] != ABSENT or second[row] != ABSENT) and scored[row]]
    models = spec_models({before.version.judge.spec, after.version.judge.spec})
    own = [models.get(before.version.judge.spec, ""), models.get(after.version.judge.spec, "")]
    differences |= paired_rate_differences(
        {
            ORDER_CONSISTENCY: (*_consistent(found, names[0], judged), *_consistent(found, names[1], judged)),
            PICKS_LONGER: (*_picks_longer(found, names[0], judged), *_picks_longer(found, names[1], judged)),
            PICKS_ITSELF: (
                *_picks_itself(found, names[0], own[0], judged),
                *_picks_itself(found, names[1], own[1], judged),
            ),
        },
        [found.prompt(row) for row in judged],
    )
    return VersionComparison(reference.name, *names, held_out_only, differences)


def _consistent(found: PairVerdicts, judge: str, rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(the same verdict in both orders, judged in both orders with a verdict each) per row."""
    primary, other = found.judges[judge][rows], found.other_order[judge][rows]
    both = (primary >= 0) & (other >= 0)  # ABSENT and NO_VERDICT are negative
    return both & (primary == other), both


def _picks_itself(found: PairVerdicts, judge: str, model: str, rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(chose its own model's response, a decisive verdict on a pair its own model answered one side
    of) per row; nothing counted for a judge that is no candidate model."""
    picks = found.judges[judge][rows]
    sides = np.array([(found.pairs[row].model_1, found.pairs[row].model_2) for row in rows], dtype=object).reshape(
        -1, 2
    )
    mine = (sides[:, 0] == model) != (sides[:, 1] == model) if model else np.zeros(len(rows), dtype=bool)
    decisive = np.isin(picks, (FIRST, SECOND)) & mine
    own = np.where(sides[:, 0] == model, FIRST, SECOND)
    return decisive & (picks == own), decisive


def _picks_longer(found: PairVerdicts, judge: str, rows: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """(chose the longer response, a decisive verdict on responses of different lengths) per row."""
    picks = found.judges[judge][rows]
    lengths = np.array([(found.pairs[row].length_1, found.pairs[row].length_2) for row in rows]).reshape(-1, 2)
    decisive = np.isin(picks, (FIRST, SECOND)) & (lengths[:, 0] != lengths[:, 1])
    longer = np.where(lengths[:, 0] > lengths[:, 1], FIRST, SECOND)
    return decisive & (picks == longer), decisive


class Comparisons:
    """Comparisons among one judge's versions: their runs read in one query, and each benchmark and
    criterion's verdicts (the judge lab's observations, every version's at once) read once, however
    many versions a page compares (it was one read per comparison, on every view)."""

    def __init__(self, versions: Sequence[JudgeVersion]) -> None:
        self.names = [str(version) for version in versions]
        self.runs: dict[int, list[VersionRun]] = defaultdict(list)  # version id → its runs, oldest first
        rows = VersionRun.objects.filter(version__in=list(versions)).select_related(
            "version", "judge_run__reference__benchmark", "judge_run__reference__criterion"
        )
        for run in rows.order_by("pk"):
            self.runs[run.version_id].append(run)
        self._verdicts: dict[tuple[str, str], PairVerdicts] = {}

    def between(self, before: JudgeVersion, after: JudgeVersion) -> list[VersionComparison]:
        """`after` against `before` on each debate run both were run on (each's latest run there)."""
        earlier = self._latest(before)
        return [
            compare_runs(earlier[reference], run, self._verdicts_for(run))
            for reference, run in self._latest(after).items()
            if reference in earlier
        ]

    def against_parent(self, version: JudgeVersion) -> list[VersionComparison]:
        return [] if version.parent is None else self.between(version.parent, version)

    def _latest(self, version: JudgeVersion) -> dict[int, VersionRun]:
        return {run.judge_run.reference_id: run for run in self.runs.get(version.pk, [])}

    def _verdicts_for(self, run: VersionRun) -> PairVerdicts:
        reference = run.judge_run.reference
        key = (reference.benchmark.slug, reference.criterion.slug)
        if key not in self._verdicts:
            self._verdicts[key] = pair_verdicts(*key, self.names)
        return self._verdicts[key]


def parent_comparisons(version: JudgeVersion) -> list[VersionComparison]:
    """The version against its parent on each debate run both were run on (each's latest run there)."""
    if version.parent is None:
        return []
    return Comparisons([version.parent, version]).against_parent(version)


def compare_versions(before: JudgeVersion, after: JudgeVersion) -> list[VersionComparison]:
    """Any two versions on each debate run both were run on (each's latest run there)."""
    return Comparisons([before, after]).between(before, after)
