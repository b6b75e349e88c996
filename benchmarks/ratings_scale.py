"""Bradley–Terry boards at Arena's scale: time and memory of `leaderboard()` at 50 / 100 / 250 models.

Synthetic battles as Arena's are: uneven pair frequencies (a few popular models in most battles),
10 % ties, strengths spread over 600 Elo. For each size it times the board with sandwich intervals
(arena-rank's closed form) and with 200 bootstrap resamples, each call in a forked child: wall and CPU
time, and the memory the call added to the process (peak resident set, from the kernel; nothing is
traced inside the timed region). The fixed baseline is the aggregation the boards used before (a dense
cells × M² map), kept here only to measure against: the two run interleaved (ABAB…) in this process,
CPU time beside wall time, min / median / max over `--repeats`. Both must give the same ratings.

Bound (issue: scale): 250 models × 5,000,000 battles in under 10 s and 2 GiB with sandwich intervals;
the script exits non-zero when the new aggregation misses it.

    python benchmarks/ratings_scale.py                       # 50, 100, 250 models
    python benchmarks/ratings_scale.py --sizes 250:5000000   # the bound alone
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from measured import in_child, machine  # noqa: E402  (benchmarks/, beside this script)

from evalhub.core.statistics import bradley_terry as bt  # noqa: E402

NEW = bt._aggregate


def dense_aggregate(battles: bt.Battles, counts: np.ndarray) -> np.ndarray:
    """The aggregation before the scale issue: a (cells × M²) map multiplied by the counts."""
    m = len(battles.models)
    cells = counts.shape[1]
    mapping = np.zeros((cells, m * m))
    np.add.at(mapping, (np.arange(cells), battles.first * m + battles.second), battles.outcome)
    np.add.at(mapping, (np.arange(cells), battles.second * m + battles.first), 1.0 - battles.outcome)
    return (counts @ mapping).reshape(-1, m, m)


def arena_battles(models: int, battles: int, seed: int = 0) -> bt.Battles:
    """Counted cells straight from the draws (no Python loop over battles)."""
    rng = np.random.default_rng(seed)
    popularity = rng.pareto(1.2, models) + 0.05
    popularity /= popularity.sum()
    first = rng.choice(models, 2 * battles, p=popularity)
    second = rng.choice(models, 2 * battles, p=popularity)
    keep = np.flatnonzero(first != second)[:battles]  # exactly `battles`, none of a model against itself
    first, second = first[keep], second[keep]
    strength = rng.normal(0, 1.0, models)
    p = 1 / (1 + np.exp(-(strength[first] - strength[second])))
    draw = rng.uniform(size=len(first))
    outcome = np.where(draw < 0.1, 1, np.where(rng.uniform(size=len(first)) < p, 0, 2))  # 1 tie, 0 a, 2 b
    cell = (first * models + second) * 3 + outcome
    unique, count = np.unique(cell, return_counts=True)
    names = tuple(f"model-{i:03d}" for i in range(models))
    pair, result = np.divmod(unique, 3)
    return bt.Battles(
        models=names,
        first=(pair // models).astype(int),
        second=(pair % models).astype(int),
        outcome=np.array([1.0, 0.5, 0.0])[result],
        count=count.astype(float),
    )


def measure(run: Callable[[], object]) -> tuple[float, float, float, object]:
    """(wall s, CPU s, MiB the call added to the process's peak, result); a MemoryError is reported."""
    measured = in_child(run)
    return measured.wall_s, measured.cpu_s, measured.added_mib, measured.result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="50:200000,100:1000000,250:5000000", help="models:battles,…")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bootstrap-up-to", type=int, default=100, help="models up to which bootstrap is timed too")
    parser.add_argument("--old-up-to", type=int, default=100, help="models up to which the old aggregation is run")
    args = parser.parse_args()
    missed = False
    header = f"{'models':>6} {'battles':>9} {'cells':>7} {'interval':>9} {'aggregation':>11}"
    print(machine())
    print(f"{header}  wall s (min/med/max)  CPU s  added MiB")
    for size in args.sizes.split(","):
        models, count = (int(part) for part in size.split(":"))
        battles = arena_battles(models, count)
        intervals = [bt.SANDWICH] + ([bt.BOOTSTRAP] if models <= args.bootstrap_up_to else [])
        for interval in intervals:
            sides = [("bincount", NEW)] + ([("dense", dense_aggregate)] if models <= args.old_up_to else [])
            results: dict[str, list[tuple[float, float, float, object]]] = {name: [] for name, _ in sides}
            for _ in range(args.repeats):  # ABAB…: both sides see the same machine
                for name, aggregate in sides:
                    bt._aggregate = aggregate
                    try:
                        board = partial(bt.leaderboard, battles, interval=interval)
                        results[name].append(measure(board))
                    finally:
                        bt._aggregate = NEW
            boards = {name: runs[-1][3] for name, runs in results.items()}
            if len(boards) == 2 and all(isinstance(b, bt.Leaderboard) for b in boards.values()):
                new, old = (boards[name] for name in ("bincount", "dense"))
                assert isinstance(new, bt.Leaderboard) and isinstance(old, bt.Leaderboard)
                gap = max(abs(a.rating - b.rating) for a, b in zip(new.ratings, old.ratings, strict=True))
                assert gap < 1e-6, f"the aggregations disagree by {gap} Elo"
            for name, runs in results.items():
                walls = sorted(run[0] for run in runs)
                failed = next((run[3] for run in runs if isinstance(run[3], MemoryError)), None)
                cells = len(battles.count)
                timing = f"{walls[0]:6.2f}/{statistics.median(walls):6.2f}/{walls[-1]:6.2f}"
                line = f"{models:6d} {battles.total:9d} {cells:7d} {interval:>9} {name:>11}  {timing}"
                if failed is not None:
                    print(f"{line}  MemoryError: {failed}")
                    continue
                cpu, peak = statistics.median(run[1] for run in runs), max(run[2] for run in runs)
                print(f"{line}  {cpu:6.2f}  {peak:8.0f}")
                if name == "bincount" and interval == bt.SANDWICH and models >= 250:
                    if statistics.median(walls) > 10 or peak > 2048:
                        missed = True
    if missed:
        print("BOUND MISSED: 250 models × 5M battles must take under 10 s and 2 GiB with sandwich intervals")
        raise SystemExit(1)


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
