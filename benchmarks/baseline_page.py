"""The win-rate page against a baseline (`/leaderboards/baseline/`) and a model's page on AlpacaEval 2.0's
own files (8 models x 805 prompts judged by `weighted_alpaca_eval_gpt4_turbo` against gpt4_1106_preview,
no instruction_difficulty given, so the length-controlled fit estimates one difficulty per prompt), with
people's labels on 40 of claude-2's pairs. Server CPU and wall time through Django's test client:

- cold: the cache emptied first (a restart, or an evicted cache);
- after a label: one more of people's labels lands, then the page (the loop the page invites: Ask
  people, label, look).

The model page is timed with the fragment it loads after it renders (the model as a judge). Two
sides, interleaved round by round in one run: `refit` computes the judge's rows (the
length-controlled fit) whenever the page's fingerprint moves, as evalhub did before; `kept` keeps them
by what they are computed from (`win_rate_boards.judge_rows`), so a label costs no new fit. Numerical
libraries run on one BLAS thread, as evalhub's web processes do (evalhub.asgi). With `--busy N`, N
processes doing multithreaded matrix products run beside a second pass of the `kept` side, and its wall
time is set beside the quiet one.

    python benchmarks/baseline_page.py                      # ../shared/data/alpacaeval2, SQLite
    python benchmarks/baseline_page.py --rounds 5 --busy 2
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):  # as evalhub.asgi
    os.environ.setdefault(_variable, "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("SECRET_KEY", "benchmark-only")
os.environ.setdefault("EVALHUB_DATA_DIR", tempfile.mkdtemp(prefix="evalhub-baseline-bench-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import Group, User  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402

from evalhub.catalog.actions.judgments import do_import_judgments  # noqa: E402
from evalhub.dashboards import win_rate_boards  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "alpacaeval2"
JUDGE, BASELINE, LABELLED_MODEL = "weighted_alpaca_eval_gpt4_turbo", "gpt4_1106_preview", "claude-2"
PAGE = f"/leaderboards/baseline/?benchmark=ae&judge={JUDGE}&baseline={BASELINE}"
MODEL_PAGE = f"/models/{LABELLED_MODEL}/"
MODEL_FRAGMENTS = (f"/judges/model/{LABELLED_MODEL}/",)  # what the model page loads after it renders


def load(folder: Path) -> list[dict]:
    """Every annotation file imported as it is; the labelled model's records, for people's labels."""
    import gzip

    mine: list[dict] = []
    for path in sorted(folder.glob("*.annotations.json.gz")):
        data = gzip.decompress(path.read_bytes())
        do_import_judgments(filename=path.name[:-3], data=data, benchmark_slug="ae", allow_new_models=True)
        if path.name.startswith(f"{LABELLED_MODEL}."):
            mine = json.loads(data)
    return mine


def people_labels(records: list[dict], start: int, count: int) -> bytes:
    """People's verdicts on `count` of the model's pairs from `start`, as an annotations file by a person."""
    chosen = records[start : start + count]
    return json.dumps(
        [{**r, "annotator": "human_panel", "preference": 2.0 if r["preference"] > 1.5 else 1.0} for r in chosen]
    ).encode()


def clocked(action) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    action()
    return time.perf_counter() - wall, time.process_time() - cpu


def refit(found):
    return win_rate_boards.win_rates(found)


def busy(stop) -> None:  # a CPU-bound job: multithreaded BLAS, as a worker's numpy would run
    import numpy as np

    matrix = np.random.default_rng(0).standard_normal((600, 600))
    while not stop.is_set():
        matrix = np.tanh(matrix @ matrix.T / 600)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--busy", type=int, default=0, help="CPU-bound processes beside a second pass")
    args = parser.parse_args()
    if not args.data.is_dir():
        sys.exit(f"{args.data}: AlpacaEval's annotation files are not there.")

    setup_test_environment()
    call_command("migrate", verbosity=0)
    records = load(args.data)
    do_import_judgments(filename="people.json", data=people_labels(records, 0, 40), benchmark_slug="ae")
    viewer = User.objects.create_user("viewer", password="x")
    viewer.groups.add(Group.objects.get_or_create(name="viewer")[0])
    client = Client()
    client.force_login(viewer)
    next_label = [40]

    def get(url: str) -> None:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)

    def model_page() -> None:
        for url in (MODEL_PAGE, *MODEL_FRAGMENTS):
            get(url)

    def label() -> None:
        do_import_judgments(filename="one.json", data=people_labels(records, next_label[0], 1), benchmark_slug="ae")
        next_label[0] += 1

    def measure(side: str) -> dict[str, tuple[float, float]]:
        kept = win_rate_boards.judge_rows
        if side == "refit":
            win_rate_boards.judge_rows = refit  # the judge's rows computed with every page
        try:
            cache.clear()
            out = {"cold page": clocked(lambda: get(PAGE))}
            cache.clear()
            out["cold model page"] = clocked(model_page)
            # The model page computes no board (it shows the kept ones, or names those being computed):
            # the page is opened once, untimed, as a viewer would after a restart, before the label lands.
            get(PAGE)
            label()
            out["page after a label"] = clocked(lambda: get(PAGE))
            label()
            out["model page after a label"] = clocked(model_page)
        finally:
            win_rate_boards.judge_rows = kept
        return out

    get(PAGE)  # imports and first-call costs outside the timing
    results: dict[str, dict[str, list[tuple[float, float]]]] = {"refit": {}, "kept": {}}
    for _ in range(args.rounds):
        for side in ("refit", "kept"):
            for name, figure in measure(side).items():
                results[side].setdefault(name, []).append(figure)
    print(f"AlpacaEval 2.0, 8 models x 805 prompts, {args.rounds} rounds interleaved; median wall / CPU seconds")
    print(f"{'':28s} {'refit (before)':>22s} {'kept (after)':>22s}")
    for name in results["kept"]:
        cells = []
        for side in ("refit", "kept"):
            wall = statistics.median(w for w, _ in results[side][name])
            cpu = statistics.median(c for _, c in results[side][name])
            cells.append(f"{wall:6.2f} s / {cpu:5.2f} CPU-s")
        print(f"{name:28s} {cells[0]:>22s} {cells[1]:>22s}")

    if args.busy:
        context = multiprocessing.get_context("spawn")
        stop = context.Event()
        os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = str(os.cpu_count() or 1)
        workers = [context.Process(target=busy, args=(stop,)) for _ in range(args.busy)]
        for worker in workers:
            worker.start()
        time.sleep(2)
        try:
            loaded = [measure("kept") for _ in range(args.rounds)]
        finally:
            stop.set()
            for worker in workers:
                worker.join()
        print(f"\nthe kept side with {args.busy} CPU-bound processes (multithreaded BLAS) beside it:")
        for name in results["kept"]:
            quiet = statistics.median(w for w, _ in results["kept"][name])
            heavy = statistics.median(run[name][0] for run in loaded)
            cpu = statistics.median(run[name][1] for run in loaded)
            print(f"{name:28s} {heavy:6.2f} s wall ({heavy / quiet:4.1f}x quiet), {cpu:5.2f} CPU-s")


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
