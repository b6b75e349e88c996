"""The judge lab's report computed by two checkouts of evalhub, alternated on one database: each round
starts a fresh process per checkout (before, after, before, after …) that computes the report once on one
BLAS thread, as a worker does, and prints its CPU, wall and peak resident memory; then each side's median
and the ratio. The database is the one DATABASE_URL names (or the SQLite file under EVALHUB_DATA_DIR),
filled beforehand by `judge_lab_latency.py`; both checkouts must read its schema.

    git worktree add /tmp/before <commit>
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_judgelab \\
        python benchmarks/refresh_versions.py --before /tmp/before --after . --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

# Run inside each checkout: the imports and Django set up before the clock, so that the figure is the
# report's; the report digested so that both sides are seen to compute the same one.
_ONE_REPORT = """
import hashlib, json, os, resource, sys, time
sys.path.insert(0, os.getcwd())
os.environ.setdefault("SECRET_KEY", "benchmark-only")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")
import django
django.setup()
from threadpoolctl import threadpool_limits
try:
    from evalhub.reads.judged_pairs import Scope
except ImportError:  # a checkout from before the collector moved to evalhub/reads
    from evalhub.judgelab.observations import Scope
from evalhub.judgelab.report import compute
import evalhub.core.judge_lab.report, pandas, scipy.stats  # noqa: F401 (imported before the clock)
with threadpool_limits(limits=1, user_api="blas"):
    wall, cpu = time.perf_counter(), time.process_time()
    report = compute(Scope())
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024
# The report's values as plain data (numpy's scalars and a stored board's floats alike); the digest of each
# corrected board's inputs (kept with it since issue 79) is bookkeeping, not a figure.
import msgspec
from evalhub.core.judge_lab.snapshots import _plain
plain = msgspec.to_builtins(report, enc_hook=_plain)
for judge in plain["judges"]:
    judge.pop("corrected_inputs", None)
digest = hashlib.sha1(json.dumps(plain, sort_keys=True).encode(), usedforsecurity=False).hexdigest()[:12]
print(json.dumps({"cpu_s": cpu, "wall_s": wall, "peak_gib": peak, "digest": digest}))
"""


def one_report(checkout: Path) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _ONE_REPORT], cwd=checkout, capture_output=True, text=True, check=False, env=os.environ
    )
    if done.returncode:
        raise SystemExit(f"{checkout}: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the code before")
    parser.add_argument("--after", type=Path, required=True, help="a checkout of the code after")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    seen: dict[str, list[dict]] = {"before": [], "after": []}
    for round_number in range(1, args.rounds + 1):
        for side in ("before", "after"):
            figures = one_report(getattr(args, side))
            seen[side].append(figures)
            print(
                f"round {round_number} {side:6}: {figures['cpu_s']:6.2f} CPU-s {figures['wall_s']:6.2f} s wall "
                f"{figures['peak_gib']:.2f} GiB peak, report {figures['digest']}",
                flush=True,
            )
    median = {side: statistics.median(f["cpu_s"] for f in runs) for side, runs in seen.items()}
    same = {f["digest"] for runs in seen.values() for f in runs}
    before, after = median["before"], median["after"]
    print(f"median CPU-s: before {before:.2f}, after {after:.2f} ({before / after:.2f}×)")
    print("the same report on both sides" if len(same) == 1 else f"the reports differ: {sorted(same)}")


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
