"""AlpacaEval 2.0's published leaderboard, reproduced through evalhub's own path: each model's
`annotations.json` imported with `import_judgments --format alpaca-eval` (as AlpacaEval publishes it:
one JSON array), the table written by `export_winrates`, and every column compared with the CSV
published beside the annotations. Also the time each step takes (wall and CPU).

    python benchmarks/alpaca_eval_reproduction.py            # ../shared/data/alpacaeval2, SQLite in a temporary folder
    python benchmarks/alpaca_eval_reproduction.py --data DIR --keep
"""

from __future__ import annotations

import argparse
import csv
import gzip
import io
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("SECRET_KEY", "benchmark-only")
os.environ.setdefault("EVALHUB_DATA_DIR", tempfile.mkdtemp(prefix="evalhub-alpaca-eval-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from scipy.stats import spearmanr  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "alpacaeval2"
JUDGE, BASELINE = "weighted_alpaca_eval_gpt4_turbo", "gpt4_1106_preview"
COLUMNS = ("win_rate", "standard_error", "discrete_win_rate", "n_wins", "n_wins_base", "n_draws", "n_total")


def timed(step):
    wall, cpu = time.perf_counter(), time.process_time()
    out = step()
    return out, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--keep", action="store_true", help="Keep the exported CSV beside the temporary database.")
    args = parser.parse_args()
    files = sorted(args.data.glob("*.annotations.json.gz"))
    if not files:
        sys.exit(f"no *.annotations.json.gz in {args.data}")
    call_command("migrate", verbosity=0)
    work = Path(os.environ["EVALHUB_DATA_DIR"])
    records = 0
    total_wall = total_cpu = 0.0
    for path in files:
        unpacked = work / path.name.removesuffix(".gz")
        data = gzip.decompress(path.read_bytes())
        unpacked.write_bytes(data)
        records += len(json.loads(data))
        _, wall, cpu = timed(
            lambda unpacked=unpacked: call_command(
                "import_judgments",
                str(unpacked),
                "--format",
                "alpaca-eval",
                "--benchmark",
                "alpacaeval2",
                "--create-models",
                verbosity=0,
                stdout=io.StringIO(),
            )
        )
        total_wall, total_cpu = total_wall + wall, total_cpu + cpu
    out = work / "leaderboard.csv"
    _, export_wall, export_cpu = timed(
        lambda: call_command(
            "export_winrates",
            "--benchmark",
            "alpacaeval2",
            "--judge",
            JUDGE,
            "--baseline",
            BASELINE,
            "--out",
            str(out),
            stdout=io.StringIO(),
        )
    )
    with open(out, newline="") as handle:
        ours = {row["name"]: row for row in csv.DictReader(handle)}
    with open(args.data / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv", newline="") as handle:
        published = {row[""]: row for row in csv.DictReader(handle)}

    print(
        f"{len(files)} files, {records} annotations: import {total_wall:.1f} s wall, {total_cpu:.1f} s CPU "
        f"({records / total_cpu:,.0f} records per CPU-second); export_winrates {export_wall:.2f} s wall, "
        f"{export_cpu:.2f} s CPU"
    )
    print(f"\n{'model':<36} {'win_rate':>16} {'SE':>12} {'discrete':>16} {'LC (ours / published)':>24} {'avg_len':>12}")
    worst = dict.fromkeys(COLUMNS, 0.0)
    for name, row in sorted(ours.items(), key=lambda kv: -float(kv[1]["win_rate"])):
        truth = published[name]
        for column in COLUMNS:
            worst[column] = max(worst[column], abs(float(row[column]) - float(truth[column])))
        print(
            f"{name:<36} {float(row['win_rate']):>7.2f}/{float(truth['win_rate']):>7.2f} "
            f"{float(row['standard_error']):>5.2f}/{float(truth['standard_error']):>5.2f} "
            f"{float(row['discrete_win_rate']):>7.2f}/{float(truth['discrete_win_rate']):>7.2f} "
            f"{float(row['length_controlled_winrate']):>11.2f} / {float(truth['length_controlled_winrate']):>9.2f} "
            f"{row['avg_length']:>5}/{truth['avg_length']:>5}"
        )
    names = sorted(ours)
    lc = [float(ours[n]["length_controlled_winrate"]) for n in names]
    lc_published = [float(published[n]["length_controlled_winrate"]) for n in names]
    print("\nlargest absolute difference from the published CSV:")
    for column, value in worst.items():
        print(f"  {column:<20} {value:.2e}")
    gaps = [abs(a - b) for a, b in zip(lc, lc_published, strict=True)]
    print(
        f"  {'length_controlled':<20} {max(gaps):.2f} points; Spearman with the published LC "
        f"{spearmanr(lc, lc_published).statistic:.3f} (raw win rate: "
        f"{spearmanr([float(ours[n]['win_rate']) for n in names], lc_published).statistic:.3f})"
    )
    if args.keep:
        print(f"\nexported: {out}")


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
