"""The length-controlled win rate's fit on AlpacaEval 2.0's shape: 8 models × 805 prompts against one
baseline, no instruction_difficulty given, so one estimated difficulty column per prompt (~810 columns).
The two sides of the Newton step, interleaved in one run: a Cholesky solve (evalhub's) and the dense
least-squares solve (an SVD) it replaced; wall and CPU time of the whole `length_controlled` call, and the
largest difference between the two sides' win rates and standard errors (they must agree).

    python benchmarks/lc_fit.py                          # ../shared/data/alpacaeval2, one BLAS thread
    python benchmarks/lc_fit.py --threads 0 --repeats 5  # the BLAS library's own thread count
"""

from __future__ import annotations

import argparse
import gzip
import json
import statistics
import sys
import time
from pathlib import Path
from unittest import mock

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalhub.core.statistics import logistic  # noqa: E402
from evalhub.core.statistics.win_rates import Comparison, length_controlled  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "alpacaeval2"


def comparisons(folder: Path) -> list[Comparison]:
    rows = []
    for path in sorted(folder.glob("*.annotations.json.gz")):
        for record in json.loads(gzip.decompress(path.read_bytes())):
            preference = float(record["preference"])
            rows.append(
                Comparison(
                    model=record["generator_2"],
                    prompt=record["instruction"],
                    preference=0.5 if preference == 0 else preference - 1,  # P(output_2, the model, better)
                    model_length=len(record["output_2"]),
                    baseline_length=len(record["output_1"]),
                )
            )
    return rows


def least_squares_step(hessian: np.ndarray, gradient: np.ndarray) -> np.ndarray:
    return np.linalg.lstsq(hessian, gradient, rcond=None)[0]


def timed(rows: list[Comparison], side: str):
    patch = (
        mock.patch.object(logistic, "newton_step", least_squares_step)
        if side == "lstsq"
        else mock.patch.object(logistic, "newton_step", logistic.newton_step)
    )
    with patch:
        wall, cpu = time.perf_counter(), time.process_time()
        control = length_controlled(rows)
        return control, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (0: the library's default)")
    args = parser.parse_args()
    rows = comparisons(args.data)
    if not rows:
        sys.exit(f"no *.annotations.json.gz in {args.data}")
    from threadpoolctl import threadpool_limits  # scikit-learn's, in requirements-dev.txt

    limits = threadpool_limits(args.threads) if args.threads else None
    times: dict[str, list[tuple[float, float]]] = {"cholesky": [], "lstsq": []}
    results = {}
    for _ in range(args.repeats):
        for side in times:  # interleaved: both sides see the same machine
            control, wall, cpu = timed(rows, side)
            times[side].append((wall, cpu))
            results[side] = control
    if limits is not None:
        limits.restore_original_limits()
    models = len({r.model for r in rows})
    print(
        f"{len(rows)} comparisons, {models} models, {len(results['cholesky'].winrate)} fitted; "
        f"difficulty {results['cholesky'].difficulty}; BLAS threads {args.threads or 'default'}"
    )
    for side, pairs in times.items():
        walls, cpus = [w for w, _ in pairs], [c for _, c in pairs]
        print(
            f"  {side:9s} wall median {statistics.median(walls):6.2f} s (min {min(walls):.2f})   "
            f"CPU median {statistics.median(cpus):6.2f} s"
        )
    ratio = statistics.median(c for _, c in times["lstsq"]) / statistics.median(c for _, c in times["cholesky"])
    print(f"  CPU ratio lstsq / cholesky: {ratio:.1f}x")
    a, b = results["cholesky"], results["lstsq"]
    gap = max(abs(a.winrate[m] - b.winrate[m]) for m in a.winrate)
    se_gap = max(abs(a.standard_error[m] - b.standard_error[m]) for m in a.standard_error)
    print(f"  largest difference: win rate {gap:.2e} points, standard error {se_gap:.2e} points")
    if gap > 1e-6 or se_gap > 1e-6:
        raise SystemExit("the two solves disagree")


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
