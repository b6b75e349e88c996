"""Dashboard latency on a generated database: 20 models, 5,000 debates, 50,000 single-judge verdicts
(plus finished GEM and DHP jobs), server time of the leaderboard, a model page and the board with
single judges, cold (cache emptied before every request) and warm, read from the counts kept as
verdicts are written (evalhub.tallies); beside it, in the same run, the previous method: the same
boards' data read and regrouped from every verdict. Then what keeping the counts costs a write
(one judge's verdict, one settled debate, a judge run's chunk of verdicts alone and as the runner
records it; exit 1 when a chunk's verdicts with their counts take over twice the verdicts alone),
and the Bradley–Terry bootstrap the naive way (Arena's notebook: one logistic regression per
resample over the battles) against evalhub's.

    python benchmarks/dashboard_latency.py                     # SQLite in a temporary folder
    python benchmarks/dashboard_latency.py --verdicts 500000   # the larger size (issue 23)
    DATABASE_URL=postgres://… python benchmarks/dashboard_latency.py
    python benchmarks/dashboard_latency.py --requests 30 --naive-rounds 20
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("SECRET_KEY", "benchmark-only")
os.environ.setdefault("EVALHUB_SSL_REDIRECT", "false")  # the test client speaks plain HTTP, on PostgreSQL too
os.environ.setdefault("EVALHUB_DATA_DIR", tempfile.mkdtemp(prefix="evalhub-dashboard-bench-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.contrib.auth.models import Group, User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import setup_databases, setup_test_environment, teardown_databases  # noqa: E402
from django.utils import timezone  # noqa: E402
from page_timing import percentile, timed  # noqa: E402  (benchmarks/, beside this script)

from evalhub.catalog.models import Benchmark, Criterion, LanguageModel, Prompt, Response  # noqa: E402
from evalhub.core.statistics import bradley_terry as bt  # noqa: E402
from evalhub.debates.models import Debate, DebateRun, DebateStatus, JudgeRun, JudgeVerdict, winner_for  # noqa: E402
from evalhub.jobs.models import Job, JobStatus  # noqa: E402
from evalhub.scoring.models import DiscernmentRun, GemRun  # noqa: E402
from evalhub.startup import settle_loaded_objects  # noqa: E402

CATEGORIES = ["math", "coding", "writing", "brainstorming", "dialog"]
VARIANTS = ["original"] * 7 + ["masked", "gibberish", "shuffled"]


def build(models: int, debates: int, verdicts: int, seed: int) -> None:
    rng = random.Random(seed)
    benchmark = Benchmark.objects.create(slug="arena", name="Arena")
    criteria = [  # the built-in criteria are there already (a migration adds them)
        Criterion.objects.get_or_create(
            slug=name, defaults={"name": name.title(), "levels": {str(i): str(i) for i in range(1, 6)}}
        )[0]
        for name in ("helpfulness", "reasoning")
    ]
    lms = LanguageModel.objects.bulk_create(
        LanguageModel(slug=f"model-{i:02d}", display_name=f"Model {i:02d}", provider="openai", model_id=f"m{i}")
        for i in range(models)
    )
    strength = {lm.pk: rng.gauss(0, 1.0) for lm in lms}
    prompts = Prompt.objects.bulk_create(
        Prompt(benchmark=benchmark, external_id=f"p{i}", text=f"prompt {i}", category=CATEGORIES[i % 5])
        for i in range(100)
    )
    responses = Response.objects.bulk_create(
        Response(prompt=p, model=lm, text=f"{lm.slug} on {p.external_id}") for p in prompts for lm in lms
    )
    by_key = {(r.prompt_id, r.model_id): r for r in responses}
    runs_n = math.ceil(debates / len(prompts))
    pairs = [(a, b) for a in lms for b in lms if a.pk < b.pk]
    runs = DebateRun.objects.bulk_create(
        DebateRun(
            name=f"run {i}",
            benchmark=benchmark,
            criterion=criteria[i % 2],
            model_a=a,
            model_b=b,
            agents=["heuristic"] * 3,
        )
        for i, (a, b) in enumerate(rng.sample(pairs, runs_n))
    )
    rows = []
    for run in runs:
        for prompt in prompts[: debates // runs_n]:
            a, b = by_key[(prompt.pk, run.model_a_id)], by_key[(prompt.pk, run.model_b_id)]
            p_a = 1 / (1 + math.exp(strength[run.model_b_id] - strength[run.model_a_id]))
            draw, swapped = rng.random(), rng.random() < 0.5
            outcome = 0 if draw < 0.1 else (1 if draw < 0.1 + 0.9 * p_a else 2)  # 1: A better
            verdict = 0 if outcome == 0 else (1 if (outcome == 1) != swapped else 2)
            status = rng.choices(
                [DebateStatus.CONSENSUS, DebateStatus.ADJUDICATED, DebateStatus.UNRESOLVED], [0.8, 0.1, 0.1]
            )[0]
            settled = status != DebateStatus.UNRESOLVED
            rows.append(
                Debate(
                    run=run,
                    prompt=prompt,
                    response_a=a,
                    response_b=b,
                    swapped=swapped,
                    status=status,
                    verdict=verdict if settled else None,
                    winner=winner_for(verdict, swapped) if settled else "",
                )
            )
    all_debates = Debate.objects.bulk_create(rows, batch_size=2000)
    per_run: dict[int, list[Debate]] = {}
    for d in all_debates:
        per_run.setdefault(d.run_id, []).append(d)
    judge_runs = []
    per_judge_run = verdicts // (len(VARIANTS) * len(runs))
    for j, variant in enumerate(VARIANTS):
        for run in runs:
            judge_runs.append(
                JudgeRun(
                    reference=run,
                    judge=f"openai:m{j}",
                    criteria_variant=variant,
                    privileged_sources=["reference_answer"] if j == 5 else [],
                )
            )
    judge_runs = JudgeRun.objects.bulk_create(judge_runs)
    verdict_rows = []
    samples = max(1, math.ceil(per_judge_run / (debates // runs_n)))  # more verdicts than pairs: k samples each
    for judge_run in judge_runs:
        accuracy = 0.5 + 0.05 * int(judge_run.judge.rsplit("m", 1)[1])
        pairs = per_run[judge_run.reference_id][: max(1, per_judge_run // samples)]
        for d, sample in itertools.product(pairs, range(samples)):
            right = d.verdict if d.verdict is not None else 1
            v = right if rng.random() < accuracy else rng.choice([0, 1, 2])
            verdict_rows.append(
                JudgeVerdict(
                    judge_run=judge_run,
                    debate=d,
                    reversed_order=False,
                    sample=sample,
                    text="…",
                    verdict=v,
                    input_tokens=400,
                    output_tokens=80,
                    latency_s=1.2,
                )
            )
        if len(verdict_rows) >= 50_000:
            JudgeVerdict.objects.bulk_create(verdict_rows, batch_size=5000)
            verdict_rows = []
    JudgeVerdict.objects.bulk_create(verdict_rows, batch_size=5000)
    for k in range(3):
        table = {
            v: [
                {
                    "model": lm.slug,
                    "name": lm.display_name,
                    "mean": strength[lm.pk] + k,
                    "low": strength[lm.pk] - 0.2,
                    "high": strength[lm.pk] + 0.2,
                    "n": 100,
                }
                for lm in lms
            ]
            for v in ("gem", "gem-s-abstract", "gem-s-assw")
        }
        job = Job.objects.create(
            kind="gem",
            title="gem",
            status=JobStatus.SUCCEEDED,
            finished_at=timezone.now(),
            result={"table": table, "interval": "90%"},
        )
        GemRun.objects.create(
            job=job,
            benchmark=benchmark,
            variants=list(table),
            evaluation_lm=f"transformers:/lm{k}",
            prompt_version="v1",
        )
        summary = {"D_avg": 1.5, "D_min": 0.9, "D_avg_ew": 1.6, "D_min_ew": 1.0}
        dhp = {"family": "dhp", "dhp": {"judges": {f"openai:m{j}": {"summary": summary} for j in range(8)}}}
        job = Job.objects.create(
            kind="discernment", title="dhp", status=JobStatus.SUCCEEDED, result=dhp, finished_at=timezone.now()
        )
        DiscernmentRun.objects.create(
            job=job, benchmark=benchmark, family="dhp", task=f"dhp-task-{k}", perturbations=[], metrics=[], judges=[]
        )
    print(
        f"built: {LanguageModel.objects.count()} models, {Debate.objects.count():,} debates, "
        f"{JudgeVerdict.objects.count():,} single-judge verdicts, {JudgeRun.objects.count()} judge runs"
    )


def naive_bootstrap(battles: list[tuple[str, str, str]], rounds: int, seed: int) -> None:
    """Arena's notebook: resample the battles, duplicate each (ties split), fit a logistic regression."""
    from sklearn.linear_model import LogisticRegression

    names = sorted({m for a, b, _ in battles for m in (a, b)})
    index = {n: i for i, n in enumerate(names)}
    rng = np.random.default_rng(seed)
    for _ in range(rounds):
        sample = [battles[i] for i in rng.integers(0, len(battles), len(battles))]
        x = np.zeros((2 * len(sample), len(names)))
        y = np.zeros(2 * len(sample))
        for row, (a, b, outcome) in enumerate(sample):
            for copy in range(2):
                x[2 * row + copy, index[a]], x[2 * row + copy, index[b]] = math.log(10), -math.log(10)
                y[2 * row + copy] = (copy == 0) if outcome == "tie" else (outcome == "a")
        LogisticRegression(fit_intercept=False, C=1e6, tol=1e-6).fit(x, y)


def previous_method(requests: int) -> None:
    """The read the boards made before the counts, per cold request: every settled debate and every
    single judge's verdict (majorities per judge run and debate), regrouped into battles, then the
    fit; timed on the same database, beside the pages above."""
    from django.core.cache import cache

    from evalhub.reads.battles import Filters, load_battles
    from evalhub.reads.caching import fingerprint
    from evalhub.reads.verdicts import judge_run_majorities

    times: dict[str, list[float]] = {"leaderboard": [], "leaderboard, single judges too": []}
    cpus: dict[str, list[float]] = {label: [] for label in times}
    for _ in range(requests):
        for label, with_judges in (("leaderboard", False), ("leaderboard, single judges too", True)):
            cache.clear()
            start, cpu = time.perf_counter(), time.process_time()
            stamp = fingerprint()
            battles = load_battles(stamp, with_judges)
            judge_run_majorities(stamp)  # the judges board on the same page read every verdict too
            kept = [
                b.opponent_pair
                for b in battles
                if Filters(
                    sources=("consensus", "human", "single_judge") if with_judges else ("consensus", "human")
                ).keep(b)
            ]
            bt.leaderboard(kept, rounds=200, seed=0)
            times[label].append(time.perf_counter() - start)
            cpus[label].append(time.process_time() - cpu)
    print("previous method, the data read alone (from every verdict), same database and run:")
    for label, values in times.items():
        print(
            f"  {label:<32}{percentile(values, 50):>10.1f}{percentile(values, 95):>10.1f}"
            f"{percentile(cpus[label], 50):>10.1f}  (wall p50, p95, CPU p50 ms)"
        )


def timing_into(spent: list[float]):
    """A database execute wrapper that appends each statement's time (seconds), commit excluded."""

    def wrapper(execute, sql, params, many, context):
        start = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            spent.append(time.perf_counter() - start)

    return wrapper


WRITE_BOUND = 2.0  # the scale issue: the counts' bookkeeping within 2× of the write it accompanies


def write_costs(requests: int) -> bool:
    """Database time of one write with the counts kept, against the same write without them."""
    from django.db import connection, transaction

    from evalhub.core.scaleeval.debate import DebateOutcome
    from evalhub.debates.actions import DEBATES_PER_JUDGE_CHUNK, do_finish_debates
    from evalhub.debates.verdict_counts import do_recount_debates, do_recount_judge_run

    run = JudgeRun.objects.filter(criteria_variant="original").order_by("id").first()
    debates = list(Debate.objects.filter(run_id=run.reference_id).order_by("id")[:requests])
    timings: dict[str, list[float]] = {"verdict": [], "verdict, counted": [], "settle": [], "settle, counted": []}
    database: dict[str, list[float]] = {"verdict": [], "verdict, counted": []}
    cpu: dict[str, list[float]] = {}  # this process's: Django's and the driver's work, not the server's
    for index, debate in enumerate(debates):
        for counted in (False, True):
            label = "verdict, counted" if counted else "verdict"
            start, started = time.perf_counter(), time.process_time()
            spent: list[float] = []
            with connection.execute_wrapper(timing_into(spent)), transaction.atomic():
                JudgeVerdict.objects.create(
                    judge_run=run,
                    debate=debate,
                    reversed_order=True,
                    sample=index * 2 + counted,
                    text="…",
                    verdict=1,
                    input_tokens=400,
                    output_tokens=80,
                    latency_s=1.2,
                )
                if counted:
                    do_recount_debates([debate.pk])
            timings[label].append(time.perf_counter() - start)
            cpu.setdefault(label, []).append(time.process_time() - started)
            database[label].append(sum(spent))
    database |= {"settle": [], "settle, counted": []}
    for debate in debates:
        for counted in (False, True):
            label = "settle, counted" if counted else "settle"
            Debate.objects.filter(pk=debate.pk).update(status=DebateStatus.RUNNING)
            spent = []
            start, started = time.perf_counter(), time.process_time()
            with connection.execute_wrapper(timing_into(spent)):
                if counted:
                    do_finish_debates([(debate, DebateOutcome(verdict=2, rounds_used=1, turns=[]))])
                else:
                    with transaction.atomic():
                        Debate.objects.filter(pk=debate.pk).update(status=DebateStatus.CONSENSUS, verdict=1, winner="a")
            timings[label].append(time.perf_counter() - start)
            cpu.setdefault(label, []).append(time.process_time() - started)
            database[label].append(sum(spent))
    # As a judge run writes: a chunk's verdicts (25 debates, both orders) in one transaction, the chunk's
    # debates recounted in it. Each chunk is a new run's first (its debates judged by no earlier chunk
    # of it), as a run's chunks are; the two sides alternate chunk by chunk.
    chunk = DEBATES_PER_JUDGE_CHUNK
    pool = list(Debate.objects.filter(run_id=run.reference_id).order_by("id").values_list("pk", flat=True)[:chunk])
    for index in range(requests):
        for counted in (False, True):
            label = "chunk of verdicts, counted" if counted else "chunk of verdicts"
            fresh_run = JudgeRun.objects.create(reference_id=run.reference_id, judge=f"openai:chunk{index}-{counted}")
            rows = chunk_verdicts(fresh_run, pool)
            spent = []
            start, started = time.perf_counter(), time.process_time()
            with connection.execute_wrapper(timing_into(spent)), transaction.atomic():
                JudgeVerdict.objects.bulk_create(rows, ignore_conflicts=True)
                if counted:
                    do_recount_judge_run(fresh_run, pool)  # as JudgeRunRunner.write does
            timings.setdefault(label, []).append((time.perf_counter() - start) / len(rows))
            cpu.setdefault(label, []).append((time.process_time() - started) / len(rows))
            database.setdefault(label, []).append(sum(spent) / len(rows))
    chunked = statistics.median(timings["chunk of verdicts, counted"]) / statistics.median(timings["chunk of verdicts"])
    # The same chunk as the runner records it: the whole transaction that marks the chunk done (its
    # lock, the verdicts, the job's progress and usage), with the counts kept and with them left out.
    for label, per_verdict in record_chunks(run, requests).items():
        timings[label], database[label], cpu[label] = per_verdict
    recorded = statistics.median(timings["chunk recorded, counted"]) / statistics.median(timings["chunk recorded"])
    print("one write (ms): the row alone, and with the boards' counts kept in the same transaction")
    print(f"  {'':<32}{'wall p50':>10}{'wall p95':>10}{'CPU p50':>10}{'db p50':>10}{'db p95':>10}")
    for label, values in timings.items():
        db = database.get(label)
        db_cells = f"{percentile(db, 50):>10.2f}{percentile(db, 95):>10.2f}" if db else ""
        print(
            f"  {label:<32}{percentile(values, 50):>10.2f}{percentile(values, 95):>10.2f}"
            f"{percentile(cpu[label], 50):>10.2f}{db_cells}"
        )
    print("  (settle, counted is the whole do_finish_debates action: lock, save, counts, live broadcast;")
    print("   db is the statements' own time, CPU this process's; a chunk's figures are per verdict)")
    print(f"a chunk's verdicts with their counts kept: {chunked:.2f}× the verdicts alone (bound: {WRITE_BOUND}×)")
    print(f"a chunk recorded by the runner with its counts kept: {recorded:.2f}× the same record without them")
    return chunked <= WRITE_BOUND


def chunk_verdicts(judge_run: JudgeRun, debate_ids: list[int]) -> list[JudgeVerdict]:
    """A chunk's verdicts as a judge run writes them: one sample, both orders, a spread of answers."""
    return [
        JudgeVerdict(
            judge_run=judge_run,
            debate_id=debate_id,
            reversed_order=order,
            sample=0,
            text="…",
            verdict=(debate_id + order) % 3,
            input_tokens=400,
            output_tokens=80,
            latency_s=1.2,
        )
        for debate_id in debate_ids
        for order in (False, True)
    ]


def record_chunks(run: JudgeRun, requests: int) -> dict[str, tuple[list[float], list[float]]]:
    """Per verdict, wall and database time of JudgeRunRunner.record on a new judge run's chunks, the
    counts kept and (their recount replaced by nothing) not, alternated chunk by chunk."""
    from unittest import mock

    from django.db import connection

    from evalhub.debates import judging
    from evalhub.debates.actions import do_create_judge_run
    from evalhub.debates.judging import JudgeChunkResult, JudgeRunRunner

    out: dict[str, tuple[list[float], list[float], list[float]]] = {}
    for index in range(requests):
        for counted in (False, True):
            label = "chunk recorded, counted" if counted else "chunk recorded"
            judge_run = do_create_judge_run(
                reference=run.reference, judge=f"openai:record{index}-{counted}", samples=1, enqueue=False
            )
            chunk = judge_run.job.chunks.order_by("index").first()
            verdicts = chunk_verdicts(judge_run, chunk.unit_ids)
            runner = JudgeRunRunner(JudgeRunRunner.load(judge_run.job_id))
            spent: list[float] = []
            recount = judging.do_recount_judge_run if counted else (lambda *args: None)
            start, started = time.perf_counter(), time.process_time()
            with (
                connection.execute_wrapper(timing_into(spent)),
                mock.patch.object(judging, "do_recount_judge_run", recount),
            ):
                runner.record(chunk, JudgeChunkResult(verdicts=verdicts))
            wall, db, cpu = out.setdefault(label, ([], [], []))
            wall.append((time.perf_counter() - start) / len(verdicts))
            cpu.append((time.process_time() - started) / len(verdicts))
            db.append(sum(spent) / len(verdicts))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--models", type=int, default=20)
    parser.add_argument("--debates", type=int, default=5000)
    parser.add_argument("--verdicts", type=int, default=50000)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--naive-rounds", type=int, default=20, help="the naive bootstrap is timed on this many")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    setup_test_environment()
    if django.db.connection.vendor == "sqlite":  # a file in a temporary folder, as a quickstart has
        call_command("migrate", verbosity=0)
        met = run(args)
    else:
        # A database of its own (test_<name>, dropped at the end), never the one DATABASE_URL names.
        databases = setup_databases(verbosity=0, interactive=False)
        try:
            met = run(args)
        finally:
            teardown_databases(databases, verbosity=0)
    if not met:
        sys.exit(1)


def run(args: argparse.Namespace) -> bool:
    build(args.models, args.debates, args.verdicts, args.seed)
    viewer = User.objects.create_user("bench-viewer")
    viewer.groups.add(Group.objects.get_or_create(name="viewer")[0])
    client = Client()
    client.force_login(viewer)
    settle_loaded_objects()  # as evalhub/asgi.py does once the server has loaded the app

    start = time.perf_counter()
    call_command("rebuild_tallies", stdout=open(os.devnull, "w"))  # noqa: SIM115 (the rows were bulk-inserted)
    if django.db.connection.vendor == "postgresql":  # the planner's statistics, as autovacuum keeps them
        with django.db.connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    print(f"counting everything from scratch (rebuild_tallies): {time.perf_counter() - start:.1f} s")

    print(f"database: {django.db.connection.vendor}; {args.requests} requests each; times are server time (ms)")
    print(
        f"{'page (counts kept as written)':<34}{'cold p50':>10}{'cold p95':>10}{'warm p50':>10}{'warm p95':>10}"
        f"{'cold CPU':>10}{'warm CPU':>10}  (CPU: p50, Django's)"
    )
    both = "/leaderboards/?source=consensus&source=human&source=single_judge"
    pages = [
        ("leaderboard", "/leaderboards/"),
        ("model page", "/models/model-03/"),
        ("leaderboard, single judges too", both),
    ]
    for label, url in pages:
        cold, cold_cpu = timed(client, url, args.requests, cold=True)
        timed(client, url, 1, cold=False)
        warm, warm_cpu = timed(client, url, args.requests, cold=False)
        print(
            f"{label:<34}{percentile(cold, 50):>10.1f}{percentile(cold, 95):>10.1f}{percentile(warm, 50):>10.1f}"
            f"{percentile(warm, 95):>10.1f}{percentile(cold_cpu, 50):>10.1f}{percentile(warm_cpu, 50):>10.1f}"
        )
    previous_method(args.requests)
    met = write_costs(args.requests)

    from evalhub.reads.battles import load_battles
    from evalhub.reads.caching import fingerprint

    battles = [b.opponent_pair for b in load_battles(fingerprint(), with_judges=False)]
    naive_bootstrap(battles, 1, args.seed)  # import scikit-learn outside the timing
    start = time.perf_counter()
    naive_bootstrap(battles, args.naive_rounds, args.seed)
    naive_per_round = (time.perf_counter() - start) / args.naive_rounds
    start = time.perf_counter()
    bt.leaderboard(battles, rounds=200, seed=args.seed)
    ours = time.perf_counter() - start
    print(f"Bradley–Terry, {len(battles):,} battles, 200 bootstrap resamples + the full fit:")
    print(
        f"  naive (per-battle logistic regression per resample): {naive_per_round * 201:.2f} s "
        f"(extrapolated from {args.naive_rounds} resamples)"
    )
    print(f"  evalhub (aggregated counts, resamples fitted together): {ours:.3f} s")
    print(f"  ratio: {naive_per_round * 201 / ours:.0f}×")
    return met


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
