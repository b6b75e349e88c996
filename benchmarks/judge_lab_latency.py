"""The judges board (`/judges/`) on a generated database: 50 judges (10 people, 40 LLM judges) and
50,000 imported pairwise judgments, server time cold (cache emptied before every request) and warm;
and, side by side in the same run, the kappa bootstrap done the naive way (scikit-learn's
`cohen_kappa_score` on every resample of the pairs) against evalhub's (per-prompt confusion tables,
all resamples in one matrix product).

    python benchmarks/judge_lab_latency.py                 # SQLite in a temporary folder
    python benchmarks/judge_lab_latency.py --judgments 50000 --requests 20
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("SECRET_KEY", "benchmark-only")
os.environ.setdefault("EVALHUB_DATA_DIR", tempfile.mkdtemp(prefix="evalhub-judge-lab-bench-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.contrib.auth.models import Group, User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_test_environment  # noqa: E402
from page_timing import percentile, timed  # noqa: E402  (benchmarks/, beside this script)

from evalhub.catalog.models import Benchmark, Criterion, Judgment, LanguageModel, Prompt, Response  # noqa: E402
from evalhub.core.judge_lab.measures import agreement_and_kappa  # noqa: E402
from evalhub.system.bulk_insert import insert_rows  # noqa: E402


def build(judges: int, people: int, judgments: int, seed: int) -> None:
    rng = random.Random(seed)
    benchmark = Benchmark.objects.create(slug="labels", name="Labels")
    criterion = Criterion.objects.create(slug="overall", name="Overall", levels={str(i): str(i) for i in range(1, 6)})
    candidates = LanguageModel.objects.bulk_create(
        LanguageModel(slug=f"model-{i}", display_name=f"Model {i}") for i in range(8)
    )
    raters = LanguageModel.objects.bulk_create(
        [LanguageModel(slug=f"human-{i}", display_name=f"Person {i}", is_human=True) for i in range(people)]
        + [LanguageModel(slug=f"judge-{i}", display_name=f"Judge {i}") for i in range(judges - people)]
    )
    per_judge = judgments // judges
    pairs_count = max(per_judge, judgments // 25)  # each pair judged by about 25 judges
    prompts = Prompt.objects.bulk_create(
        Prompt(benchmark=benchmark, external_id=f"p{i}", text=f"question {i}") for i in range(pairs_count)
    )
    responses = []
    for prompt in prompts:
        a, b = rng.sample(candidates, 2)
        responses += [
            Response(prompt=prompt, model=a, text="word " * rng.randint(20, 300)),
            Response(prompt=prompt, model=b, text="word " * rng.randint(20, 300)),
        ]
    responses = Response.objects.bulk_create(responses, batch_size=2000)
    pairs = [(responses[2 * i], responses[2 * i + 1], rng.choice([1, 2, 0])) for i in range(pairs_count)]

    def rows():
        for index, rater in enumerate(raters):
            skill = 0.9 if rater.is_human else rng.uniform(0.4, 0.85)
            gives_probability = not rater.is_human and index % 2 == 0
            for first, second, truth in rng.sample(pairs, per_judge):
                if rng.random() < 0.5:
                    first, second, truth = second, first, {1: 2, 2: 1}.get(truth, truth)
                verdict = truth if rng.random() < skill else rng.choice([0, 1, 2])
                probability = None
                if gives_probability:
                    centre = 0.8 if verdict == 1 else 0.2 if verdict == 2 else 0.5
                    probability = min(1.0, max(0.0, centre + rng.uniform(-0.1, 0.1)))
                yield criterion.pk, rater.pk, first.pk, second.pk, verdict, probability

    # Rows as tuples in batches (as import_judgments writes them): a million model instances took gigabytes.
    columns = ("criterion_id", "judge_model_id", "response_id", "response_2_id", "verdict", "probability")
    with transaction.atomic():
        insert_rows(Judgment, columns, rows(), source="import")
    print(
        f"built: {len(raters)} judges ({people} people), {Judgment.objects.count():,} judgments on "
        f"{pairs_count:,} pairs"
    )


def naive_kappa_bootstrap(predicted, reference, clusters, resamples: int, seed: int) -> None:
    """Resample prompts, rebuild the pair lists and call scikit-learn for each resample."""
    from sklearn.metrics import cohen_kappa_score

    members: dict = {}
    for index, cluster in enumerate(clusters):
        members.setdefault(cluster, []).append(index)
    keys = list(members)
    rng = np.random.default_rng(seed)
    for _ in range(resamples):
        drawn = [i for k in rng.integers(0, len(keys), len(keys)) for i in members[keys[k]]]
        cohen_kappa_score([predicted[i] for i in drawn], [reference[i] for i in drawn])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--judges", type=int, default=50)
    parser.add_argument("--people", type=int, default=10)
    parser.add_argument("--judgments", type=int, default=50000)
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--naive-resamples", type=int, default=50, help="the naive bootstrap is timed on this many")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    setup_test_environment()
    call_command("migrate", verbosity=0)
    build(args.judges, args.people, args.judgments, args.seed)
    viewer = User.objects.create_user("bench-viewer")
    viewer.groups.add(Group.objects.get_or_create(name="viewer")[0])
    client = Client()
    client.force_login(viewer)

    print(f"database: {django.db.connection.vendor}; {args.requests} requests each; server time (ms)")
    print(f"{'page':<22}{'cold p50':>10}{'cold p95':>10}{'warm p50':>10}{'warm p95':>10}")
    for label, url in [("/judges/", "/judges/"), ("/judges/report.json", "/judges/report.json")]:
        cold = timed(client, url, args.requests, cold=True)
        warm = timed(client, url, args.requests, cold=False)
        print(
            f"{label:<22}{percentile(cold, 50):>10.1f}{percentile(cold, 95):>10.1f}"
            f"{percentile(warm, 50):>10.1f}{percentile(warm, 95):>10.1f}"
        )
    print(f"target: /judges/ cold p95 under 300 ms (median cold {statistics.median(cold) * 1000:.0f} ms for the JSON)")

    # One judge against the people's majority, as the report does it, for the side-by-side.
    from evalhub.judgelab.observations import Scope, collect

    found = collect(Scope())
    labels, pairs = found.labels, list(found.pairs.values())
    judge = next(j for j in found.judges.values() if j.kind == "model")
    votes: dict[int, list[int]] = {}
    for person in (j for j in found.judges.values() if j.kind == "person"):
        for row, pick in zip(labels[person.id].rows.tolist(), labels[person.id].picks.tolist(), strict=True):
            votes.setdefault(row, []).append(pick)
    reference = {row: max(set(picks), key=picks.count) for row, picks in votes.items()}
    mine = [
        (row, pick)
        for row, pick in zip(labels[judge.id].rows.tolist(), labels[judge.id].picks.tolist(), strict=True)
        if row in reference
    ]
    predicted = [pick for _, pick in mine]
    expected = [reference[row] for row, _ in mine]
    clusters = [pairs[row].cluster for row, _ in mine]
    naive_kappa_bootstrap(predicted, expected, clusters, 1, args.seed)  # import scikit-learn outside the timing
    agreement_and_kappa(predicted, expected, clusters, resamples=1000, seed=args.seed + 1)  # and numpy's first call
    start = time.perf_counter()
    naive_kappa_bootstrap(predicted, expected, clusters, args.naive_resamples, args.seed)
    naive = (time.perf_counter() - start) / args.naive_resamples * 1000
    start = time.perf_counter()
    agreement_and_kappa(predicted, expected, clusters, resamples=1000, seed=args.seed)
    ours = time.perf_counter() - start
    print(f"kappa with a 1,000-resample bootstrap over prompts, one judge, {len(predicted):,} pairs:")
    print(f"  naive (scikit-learn on each resample): {naive:.2f} s (extrapolated from {args.naive_resamples})")
    print(f"  evalhub (confusion tables per prompt, one matrix product): {ours:.3f} s")
    print(f"  ratio: {naive / ours:.0f}×")


if __name__ == "__main__":
    main()
