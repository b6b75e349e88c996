"""DHP statistics on a full synthetic table: 19 judges × 6 datasets × 10 perturbations × 4 metrics
× 100 items (4,560 Wilcoxon tests over 456,000 score pairs), vectorised vs one scipy call per test,
and the CSV read: the vectorised read vs the line-by-line one (interleaved, CPU time beside wall).

Bound (issue: scale): `dhp_report`'s work, read and statistics, under 2 s; exits 1 when missed.

    python benchmarks/dhp_stats.py
"""

from __future__ import annotations

import random
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from scipy.stats import wilcoxon  # noqa: E402

from evalhub.core.dhp.report import build_report, read_scores  # noqa: E402

PERTURBATIONS = [
    ("deletions", "C"),
    ("typos", "C"),
    ("entities", "W"),
    ("grammar", "W"),
    ("word_deletions", "W"),
    ("reorder", "S"),
    ("rewrite", "S"),
    ("random_ending", "S"),
    ("wrong_ending", "S"),
    ("random_answer", "S"),
]
METRICS = ["coherence", "consistency", "fluency", "relevance"]


def table(judges=19, datasets=6, items=100, seed=0) -> str:
    rng = random.Random(seed)
    lines = ["judge,item_id,perturbation,level,metric,original_score,perturbed_score"]
    for j in range(judges):
        skill = rng.random()
        for d in range(datasets):
            for perturbation, level in PERTURBATIONS:
                for metric in METRICS:
                    for item in range(items):
                        original = rng.randint(2, 5)
                        drop = 1 if rng.random() < skill * 0.6 else rng.choice((0, 0, 1, -1))
                        lines.append(
                            f"judge{j}/data{d},{item},{perturbation},{level},{metric},{original},"
                            f"{min(5, max(1, original - drop))}"
                        )
    return "\n".join(lines) + "\n"


def naive(groups) -> dict:
    p = {}
    for (judge, perturbation), group in groups.items():
        for metric, pairs in group["metrics"].items():
            original, perturbed = zip(*pairs, strict=True)
            if original == perturbed:
                p[(judge, perturbation, metric)] = 1.0
            else:
                p[(judge, perturbation, metric)] = wilcoxon(
                    original, perturbed, zero_method="wilcox", alternative="greater"
                ).pvalue
    return p


def timed(function, *args):
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    from evalhub.core.dhp.report import _read_checked

    text = table()
    read_scores(text)  # pandas imported before timing
    reads: dict[str, list[tuple[float, float]]] = {"vectorised": [], "line by line": []}
    for _ in range(3):  # ABAB…
        for name, reader in (("vectorised", read_scores), ("line by line", _read_checked)):
            groups, wall, cpu = timed(reader, text)
            reads[name].append((wall, cpu))
    for name, runs in reads.items():
        walls = sorted(w for w, _ in runs)
        cpu = min(c for _, c in runs)
        print(f"CSV read, {name}: wall {walls[0]:.2f}/{walls[1]:.2f}/{walls[2]:.2f} s (min/med/max), CPU {cpu:.2f} s")
    parsed = sorted(w for w, _ in reads["vectorised"])[1]
    started = time.perf_counter()
    report = build_report(groups)
    fast = time.perf_counter() - started
    started = time.perf_counter()
    slow = naive(groups)
    naive_s = time.perf_counter() - started
    worst = max(abs(report["judges"][j]["perturbations"][p]["p_by_metric"][m] - v) for (j, p, m), v in slow.items())
    tests = sum(len(g["metrics"]) for g in groups.values())
    print(f"{tests} tests over {text.count(chr(10)) - 1} rows; CSV read and checked in {parsed:.2f} s")
    print(f"statistics, vectorised: {fast:.2f} s; read + statistics: {parsed + fast:.2f} s (bound < 2 s)")
    print(
        f"statistics, one scipy call per test: {naive_s:.2f} s → {naive_s / fast:.1f}× slower; "
        f"max |p difference| {worst:.1e}"
    )
    levels = defaultdict(list)
    for entry in report["judges"].values():
        levels["D_avg"].append(entry["summary"]["D_avg"])
    print(
        f"D_avg across {len(report['judges'])} judge×dataset rows: min {min(levels['D_avg']):.2f}, "
        f"max {max(levels['D_avg']):.2f}"
    )
    if parsed + fast > 2:
        print("BOUND MISSED: dhp_report's read and statistics must take under 2 s")
        raise SystemExit(1)


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
