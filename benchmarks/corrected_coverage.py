"""Do corrected win rates keep their promise? A simulation with known truth, in one run.

Each data set has `--models` models compared with a baseline on `--prompts` prompts. Every pair has
a true probability p that people prefer the model; the true win rate is the mean of p. People's
label is a coin with chance p. The judge sees the same pair with planted errors:

- position bias: +0.1 towards whichever response it was shown first (order drawn per pair);
- length bias: +0.08 per unit of tanh(length difference), the model's responses longer on average;
- model-dependent noise: a normal error with SD 0.05–0.3 drawn per model, clipped to [0, 1].

Uniformly chosen `--labels` pairs per model get people's labels. For each model it computes the raw
judge's interval (the judge's mean ± 1.96 SE, as AlpacaEval reports it), people's own, and the
judge's corrected by people's (PPI++, evalhub.core.ppi), and counts how often each 95 % interval
covers the true win rate, with the mean widths and the width ratio the judge's agreement predicts.

Then active selection (Zrnic & Candès 2024): pairs labelled with probability rising with the judge's
uncertainty √(p̂(1−p̂)) (evalhub.core.ppi.labelling_probabilities), weighted by 1/π, against uniform
labelling at several budgets: how many uniform labels reach the width active selection reaches.

Bounds (issue: corrected boards), exit 1 when missed: corrected coverage at least 93 %; the width
ratio within 10 % of the one the judge's agreement predicts; active selection reaching uniform
labelling's width with at most 60 % of its labels (missed so far: see the README).

    python benchmarks/corrected_coverage.py --datasets 500
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evalhub.core.ppi import active_mean, classical_mean, labelling_probabilities, ppi_mean  # noqa: E402

Z = 1.959963984540054


def one_model(rng: np.random.Generator, prompts: int, calibrated: bool = False):
    """(true p per pair, people's labels, the judge's preferences). `calibrated`: a judge whose
    probability is p plus small noise (SD 0.05), with no position or length bias."""
    p = rng.beta(0.5, 0.5, prompts) * rng.uniform(0.6, 1.0) + rng.uniform(0.0, 0.2)  # model strength varies
    p = np.clip(p, 0, 1)
    people = (rng.uniform(size=prompts) < p).astype(float)
    if calibrated:
        return p, people, np.clip(p + rng.normal(0, 0.05, prompts), 0, 1)
    shown_first = rng.uniform(size=prompts) < 0.5
    length_gap = np.tanh(rng.normal(0.6, 1.0, prompts))  # the model's answers run longer
    noise = rng.normal(0, rng.uniform(0.05, 0.3), prompts)
    judge = np.clip(p + np.where(shown_first, 0.1, -0.1) + 0.08 * length_gap + noise, 0, 1)
    return p, people, judge


def coverage(args: argparse.Namespace, rng: np.random.Generator) -> list[str]:
    """Prints the table; returns the bounds it missed."""
    hits = {"judge": 0, "people": 0, "corrected": 0}
    widths: dict[str, list[float]] = {key: [] for key in hits}
    predicted_ratio, total = [], 0
    for _ in range(args.datasets):
        for _ in range(args.models):
            p, people, judge = one_model(rng, args.prompts)
            truth = p.mean()
            chosen = rng.choice(args.prompts, args.labels, replace=False)
            rest = np.setdiff1d(np.arange(args.prompts), chosen)
            raw_se = judge.std(ddof=1) / np.sqrt(args.prompts)
            estimates = {
                "judge": (judge.mean() - Z * raw_se, judge.mean() + Z * raw_se),
                "people": (lambda e: (e.low, e.high))(classical_mean(people[chosen])),
                "corrected": (lambda e: (e.low, e.high))(ppi_mean(people[chosen], judge[chosen], judge[rest])),
            }
            for key, (low, high) in estimates.items():
                hits[key] += low <= truth <= high
                widths[key].append(high - low)
            # The ratio PPI++'s variance formula predicts from the judge's agreement with people.
            corrected = ppi_mean(people[chosen], judge[chosen], judge[rest])
            lam = corrected.lam
            var_corrected = np.var(people[chosen] - lam * judge[chosen]) + lam**2 * np.var(judge[rest]) * (
                args.labels / len(rest)
            )
            predicted_ratio.append(np.sqrt(np.var(people[chosen]) / var_corrected))
            total += 1
    print(f"{total} intervals ({args.datasets} data sets × {args.models} models, {args.prompts} prompts, ", end="")
    print(f"{args.labels} people's labels each); the target is 95 % coverage")
    print(f"{'':28} {'coverage':>9} {'mean width (points)':>20}")
    names = {"judge": "raw judge (AlpacaEval SE)", "people": "people only", "corrected": "corrected by people (PPI++)"}
    for key, name in names.items():
        print(f"{name:28} {100 * hits[key] / total:8.1f}% {100 * np.mean(widths[key]):20.2f}")
    observed = np.mean(np.array(widths["people"]) / np.array(widths["corrected"]))
    print(f"people-only / corrected width: {observed:.2f} observed, {np.mean(predicted_ratio):.2f} predicted")
    missed = []
    if hits["corrected"] / total < 0.93:
        missed.append(f"corrected coverage {100 * hits['corrected'] / total:.1f}% is under 93%")
    if abs(observed - np.mean(predicted_ratio)) > 0.1 * np.mean(predicted_ratio):
        missed.append("the width ratio is more than 10% off the predicted one")
    return missed


def active_versus_uniform(args: argparse.Namespace, rng: np.random.Generator, calibrated: bool) -> list[str]:
    """Prints the comparison; returns the targets it missed."""
    budgets = [int(args.labels * f) for f in (0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0)]
    uniform: dict[int, list[float]] = {b: [] for b in budgets}
    active, active_hits, active_labels, total = [], 0, [], 0
    for _ in range(args.datasets):
        p, people, judge = one_model(rng, args.prompts, calibrated)
        for budget in budgets:
            chosen = rng.choice(args.prompts, budget, replace=False)
            rest = np.setdiff1d(np.arange(args.prompts), chosen)
            estimate = ppi_mean(people[chosen], judge[chosen], judge[rest])
            uniform[budget].append(estimate.high - estimate.low)
        chance = labelling_probabilities(np.sqrt(judge * (1 - judge)), budget=args.labels)
        picked = rng.uniform(size=args.prompts) < chance
        estimate = active_mean(judge, picked, people[picked], chance)
        active.append(estimate.high - estimate.low)
        active_hits += estimate.low <= p.mean() <= estimate.high
        active_labels.append(int(picked.sum()))
        total += 1
    width = float(np.mean(active))
    curve = [(b, float(np.mean(uniform[b]))) for b in budgets]
    which = "a calibrated judge (its probability ± 0.05)" if calibrated else "the judge with planted errors"
    print(
        f"\n{which}: active selection, about {np.mean(active_labels):.0f} labels: width {100 * width:.2f} points, ",
        end="",
    )
    print(f"coverage {100 * active_hits / total:.1f}%")
    print("uniform labelling:  " + "  ".join(f"{b} labels → {100 * w:.2f}" for b, w in curve))
    needed = None
    for (b0, w0), (b1, w1) in zip(curve, curve[1:], strict=False):
        if w0 >= width >= w1:
            needed = b0 + (b1 - b0) * (w0 - width) / (w0 - w1)
    if needed is None:
        print("uniform labelling needs more than the largest budget tried for the same width")
        return []
    share = np.mean(active_labels) / needed
    print(f"uniform labelling needs about {needed:.0f} labels for the same width: active uses ", end="")
    print(f"{100 * share:.0f}% of them (target: at most 60%)")
    return [f"active selection with {which} used {100 * share:.0f}% of the uniform labels"] if share > 0.6 else []


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", type=int, default=500)
    parser.add_argument("--models", type=int, default=4)
    parser.add_argument("--prompts", type=int, default=800)
    parser.add_argument("--labels", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    started = time.process_time()
    missed = coverage(args, rng)
    missed += active_versus_uniform(args, rng, calibrated=False)
    missed += active_versus_uniform(args, rng, calibrated=True)
    print(f"\n{time.process_time() - started:.1f} CPU-seconds")
    if missed:
        print("TARGETS MISSED:\n  " + "\n  ".join(missed))
        raise SystemExit(1)


if __name__ == "__main__":
    main()
