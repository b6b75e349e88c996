"""Every judge's corrected win-rate board at once, as a worker's refresh computes them, with the other
judges of each model read two ways: per board, prompt by prompt from each judge's mapping (what a board
did: judges² × prompts dictionary reads per model), and aligned once per model and sliced per board
(JudgesOfModel). Interleaved ABAB in one run, CPU beside wall; the two sides' figures must be equal.

    python benchmarks/multi_judge_boards.py                     # 20 judges, 10 models, 1,000 prompts
    python benchmarks/multi_judge_boards.py --judges 50 --models 20 --rounds 3
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from measured import machine, sides_compared  # noqa: E402  (benchmarks/, beside this script)

from evalhub.core.statistics.corrected_win_rates import JudgesOfModel, corrected_win_rate  # noqa: E402


def judged(judges: int, models: int, prompts: int, labelled: float, seed: int):
    """model → judge → prompt → preference, and model → prompt → people's preference."""
    rng = np.random.default_rng(seed)
    by_model, people = {}, {}
    for model in range(models):
        truth = rng.uniform(size=prompts)
        by_model[f"m{model}"] = {
            f"j{judge:02d}": dict(
                zip(
                    (f"p{k}" for k in range(prompts)),
                    np.clip(truth + rng.normal(scale=0.1 + 0.3 * rng.uniform(), size=prompts), 0, 1).tolist(),
                    strict=True,
                )
            )
            for judge in range(judges)
        }
        shown = rng.uniform(size=prompts) < labelled
        people[f"m{model}"] = {f"p{k}": float(truth[k] > 0.5) for k in range(prompts) if shown[k]}
    return by_model, people


def boards(by_model, people, aligned: bool) -> list:
    rows = []
    for model, judges in by_model.items():
        table = JudgesOfModel.of(judges) if aligned else None
        for judge, found in judges.items():
            others = table.without(judge) if table is not None else [p for j, p in judges.items() if j != judge]
            rows.append(corrected_win_rate(model, found, people[model], others=others))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judges", type=int, default=20)
    parser.add_argument("--models", type=int, default=10)
    parser.add_argument("--prompts", type=int, default=1000)
    parser.add_argument("--labelled", type=float, default=0.1)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(machine())
    by_model, people = judged(args.judges, args.models, args.prompts, args.labelled, 0)
    for aligned in (False, True):  # untimed: the estimators' first call imports SciPy's statistics
        boards(dict(list(by_model.items())[:1]), people, aligned)
    seen: dict[str, list[tuple[float, float]]] = {"per board": [], "aligned once": []}
    made = {}
    for _ in range(args.rounds):
        for side in seen:
            wall, cpu = time.perf_counter(), time.process_time()
            made[side] = boards(by_model, people, aligned=side == "aligned once")
            seen[side].append((time.perf_counter() - wall, time.process_time() - cpu))
    assert made["per board"] == made["aligned once"], "the two readings must give the same figures"
    print(
        f"{args.judges} judges x {args.models} models x {args.prompts:,} prompts, {args.labelled:.0%} labelled "
        f"by people: {len(made['per board'])} corrected rows; {args.rounds} rounds ABAB; figures equal"
    )
    print(f"per board / aligned once CPU: {sides_compared(seen, 'per board', 'aligned once'):.1f}x")


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
