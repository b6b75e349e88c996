"""A corrected Bradley–Terry board (prediction-powered logistic regression) at many models: the dense
design against the sparse one (a battle's row has two non-zeros), interleaved ABAB in one run, CPU
beside wall, each side's ratings compared. At 200 models the dense xᵀWx was nine tenths of a judge lab
report with 50 judges (issue 79); below 20 columns both sides are the same code.

    python benchmarks/corrected_board_models.py                      # 200 models, 24,000 battles
    python benchmarks/corrected_board_models.py --models 50 --battles 100000 --rounds 5
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from measured import machine, sides_compared  # noqa: E402  (benchmarks/, beside this script)

from evalhub.core.statistics import logistic_ppi  # noqa: E402
from evalhub.core.statistics.corrected_ratings import corrected_bradley_terry  # noqa: E402


def battles(models: int, count: int, labelled: float, seed: int):
    rng = np.random.default_rng(seed)
    strength = rng.normal(0, 1, models)
    first = rng.integers(0, models, count)
    second = (first + rng.integers(1, models, count)) % models
    truth = rng.random(count) < 1 / (1 + np.exp(strength[second] - strength[first]))
    judge = np.where(rng.random(count) < 0.8, truth, ~truth).astype(float)
    people = np.where(rng.random(count) < labelled, truth.astype(float), np.nan)
    names = np.array([f"model-{i:03d}" for i in range(models)], dtype=object)
    return names[first], names[second], judge, people, rng.integers(0, count // 4, count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--battles", type=int, default=24_000)
    parser.add_argument("--labelled", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    first, second, judge, people, clusters = battles(args.models, args.battles, args.labelled, 0)
    thin = logistic_ppi._sparse_if_thin

    def fit(side: str):
        logistic_ppi._sparse_if_thin = thin if side == "sparse" else (lambda x: None)
        try:
            wall, cpu = time.perf_counter(), time.process_time()
            board = corrected_bradley_terry(first, second, judge, people, clusters=clusters)
            return time.perf_counter() - wall, time.process_time() - cpu, board
        finally:
            logistic_ppi._sparse_if_thin = thin

    seen: dict[str, list[tuple[float, float]]] = {"dense": [], "sparse": []}
    boards = {}
    for _ in range(args.rounds):
        for side in ("dense", "sparse"):
            wall, cpu, boards[side] = fit(side)
            seen[side].append((wall, cpu))
    dense, sparse = boards["dense"], boards["sparse"]
    assert not isinstance(dense, str) and not isinstance(sparse, str), (dense, sparse)
    gap = max(
        abs(value - other)
        for a, b in zip(dense.ratings, sparse.ratings, strict=True)
        for value, other in ((a.corrected, b.corrected), (a.corrected_low, b.corrected_low))
    )
    print(f"{args.models} models, {args.battles:,} battles, {args.labelled:.0%} labelled; {args.rounds} rounds ABAB")
    ratio = sides_compared(seen, "dense", "sparse")
    print(f"dense / sparse CPU: {ratio:.1f}x; largest rating difference {gap:.2e}")


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
