"""The production shape on its shipped defaults, roughed up: several debate runs, with DHP, YESciEval and
generation runs beside them, queued at once on the compose worker (`--pool=threads --concurrency=16`, no
EVALHUB_DB_POOL_MAX_SIZE set), `uvicorn --workers 2`, PostgreSQL's connections to the database all ended
mid-run, and the worker SIGKILLed and started again.

A database of its own on the PostgreSQL server it is given (dropped at the end), a Redis database of its
own (flushed before and after). The agents are the fake OpenAI-compatible server in a process of its own;
each run has its own agent names, so no run's answers come from another's response cache.

It prints whether every job ended Succeeded by itself (no Resume), the page loads' status codes while the
connections were dropped and after (0 × 5xx is the target), whether any unit (debate turn, judge score,
generated response) was stored twice, the calls the fake provider served beside the units stored (a call
in flight when the worker was killed is asked again: its answer was never stored), and the peak
connections to PostgreSQL and Redis.

    python benchmarks/deployment_load.py                      # 5 runs × 42 debates, as issue #54 saw
    python benchmarks/deployment_load.py --runs 2 --debates 10  # a quicker look
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.adjudication_load import (  # noqa: E402
    Server,
    drop_database,
    fresh_deployment,
    session_for,
    setup_django,
)
from benchmarks.connection_load import Peaks, load_pages, start_worker  # noqa: E402
from evalhub.llm.testing import ServerProcess  # noqa: E402

BENCH_DATABASE = "evalhub_bench_deployment"
COMPOSE_CONCURRENCY = 16  # docker-compose.yml's worker


SENTENCES = (
    "The river rose after three days of rain. Farmers moved their animals to higher ground. "
    "The town council opened the school as a shelter. Most roads were clear again within a week."
)


def make_load(runs: int, debates: int, agents_url: str, rounds: int, others: int) -> dict[str, list[int]]:
    """`runs` debate runs over one benchmark of `debates` prompts and `others` each of DHP, YESciEval and
    generation runs on it, all started in one transaction (enqueued on commit): their jobs' ids by kind."""
    from django.db import transaction

    from evalhub.catalog.demo import do_load_builtin_criteria
    from evalhub.catalog.models import Benchmark, Criterion, LanguageModel, Prompt, Response
    from evalhub.debates.actions import do_create_run, do_start_run
    from evalhub.generation.actions import do_create_generation_run, do_ensure_builtin_templates, do_register_candidate
    from evalhub.generation.config import GenerationConfig
    from evalhub.scoring.actions import do_create_discernment_run
    from evalhub.scoring.discernment.config import DiscernmentConfig

    do_load_builtin_criteria()
    benchmark = Benchmark.objects.create(slug="load", name="load", task_type="summarization")
    a = LanguageModel.objects.create(slug="model-a", display_name="A")
    b = LanguageModel.objects.create(slug="model-b", display_name="B")
    prompts = Prompt.objects.bulk_create(
        Prompt(benchmark=benchmark, external_id=str(i), text=f"Summarise article {i}.", source=SENTENCES)
        for i in range(debates)
    )
    Response.objects.bulk_create(
        Response(prompt=prompt, model=model, text=f"{model.display_name} on {prompt.external_id}: {SENTENCES}")
        for prompt in prompts
        for model in (a, b)
    )
    criterion = Criterion.objects.get(slug="helpfulness")
    agent = {"provider": "openai-compatible", "base_url": f"{agents_url}/v1", "max_concurrency": 4 * debates}
    answer = {t.slug: t for t in do_ensure_builtin_templates()}["answer"]
    jobs: dict[str, list[int]] = {"debates": [], "dhp": [], "yescieval": [], "generation": []}
    with transaction.atomic():  # every run queued in the same moment
        for run_index in range(runs):
            run = do_create_run(
                name=f"load {run_index}",
                benchmark=benchmark,
                criterion=criterion,
                model_a=a,
                model_b=b,
                agents=[{**agent, "model": f"judge-{run_index}-{i}"} for i in range(3)],
                rounds=rounds,
            )
            jobs["debates"].append(do_start_run(run).job_id)
        for index in range(others):
            dhp = DiscernmentConfig(
                benchmark=benchmark,
                family="dhp",
                task="dhp-summarization",
                targets=[a],
                perturbations=[["random_deletions", "minor"], ["reordering", "major"]],
                metrics=["coherence", "fluency"],
                judges=[f"openai-compatible:{agents_url}/v1|dhp-{index}"],
                repeats=2,
            )
            jobs["dhp"].append(do_create_discernment_run(dhp).job_id)
            yescieval = DiscernmentConfig(
                benchmark=benchmark,
                family="yescieval",
                task="yescieval",
                targets=[a],
                perturbations=[["cohesion_subtle", "subtle"], ["cohesion_extreme", "extreme"]],
                metrics=["cohesion"],
                judges=[f"openai-compatible:{agents_url}/v1|yesci-{index}"],
                repeats=1,
            )
            jobs["yescieval"].append(do_create_discernment_run(yescieval).job_id)
            writers = [do_register_candidate(f"openai-compatible:{agents_url}/v1|writer-{index}-{i}") for i in range(2)]
            generation = GenerationConfig(benchmark=benchmark, candidates=writers, template=answer, samples=2)
            jobs["generation"].append(do_create_generation_run(generation).job_id)
    return jobs


def end_every_connection(server: str, database: str) -> int:
    """What a PostgreSQL restart does to the application: every backend of its database ended."""
    import psycopg

    with psycopg.connect(server, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (database,),
        ).fetchall()
    return len(rows)


def job_states(job_ids: list[int]) -> list[tuple[str, str, int, int, str]]:
    from evalhub.jobs.models import Job

    jobs = Job.objects.filter(pk__in=job_ids).order_by("pk")
    return [(job.kind, job.status, job.progress_done, job.progress_total, job.message) for job in jobs]


def units_twice(jobs: dict[str, list[int]]) -> dict[str, tuple[int, int]]:
    """Per kind, the units stored and how many of them twice: debate turns, judge scores, responses."""
    from django.db.models import Count

    from evalhub.catalog.models import Response
    from evalhub.debates.models import DebateTurn
    from evalhub.generation.models import GenerationRun
    from evalhub.scoring.models import JudgeScore

    def tally(rows) -> tuple[int, int]:
        counts = [row["n"] for row in rows]
        return sum(counts), sum(n - 1 for n in counts)

    turns = DebateTurn.objects.filter(debate__run__job_id__in=jobs["debates"]).values("debate_id", "round", "agent")
    scores = JudgeScore.objects.filter(run__job_id__in=jobs["dhp"] + jobs["yescieval"]).values(
        "run_id", "response_id", "metric", "repeat", "judge"
    )
    writers = GenerationRun.objects.filter(job_id__in=jobs["generation"]).values_list("candidates", flat=True)
    responses = Response.objects.filter(model__in=writers).values("prompt_id", "model_id", "variant")
    return {
        "debate turns": tally(turns.annotate(n=Count("id"))),
        "judge scores": tally(scores.annotate(n=Count("id"))),
        "responses": tally(responses.annotate(n=Count("id"))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--debates", type=int, default=42, help="debates per run")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--others", type=int, default=1, help="DHP, YESciEval and generation runs beside, of each")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds before an agent's first word")
    parser.add_argument("--words", type=int, default=12)
    parser.add_argument("--chunk-delay", type=float, default=0.05, help="seconds between streamed words")
    parser.add_argument("--drop-after", type=float, default=8.0, help="seconds into the runs to end every connection")
    parser.add_argument("--kill-after", type=float, default=16.0, help="seconds into the runs to SIGKILL the worker")
    parser.add_argument("--page-loads", type=int, default=40, help="at each of two moments: the drop, and after it")
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13", help="a Redis database it may flush")
    parser.add_argument(
        "--database-server",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        help="a PostgreSQL URL; the benchmark makes and drops a database of its own there",
    )
    args = parser.parse_args()

    import redis

    env = fresh_deployment(args.database_server, BENCH_DATABASE, args.redis_url, "evalhub-bench-deployment")
    os.environ.pop("EVALHUB_DB_POOL_MAX_SIZE", None)  # the shipped defaults
    agents = ServerProcess(args.latency, args.chunk_delay, args.words, keep_alive=True)
    server = None
    workers = []
    peaks = Peaks(args.database_server, BENCH_DATABASE, args.redis_url)
    try:
        setup_django(env)
        from django.db import connections

        from evalhub.debates.models import DebateRun

        session = session_for("reader", role="viewer")
        connections.close_all()
        peaks.start()
        server = Server(env, 2)
        workers.append(start_worker(env, COMPOSE_CONCURRENCY))
        jobs = make_load(args.runs, args.debates, agents.url, args.rounds, args.others)
        job_ids = [job_id for ids in jobs.values() for job_id in ids]
        first_run = DebateRun.objects.get(job_id=jobs["debates"][0]).pk  # its pages are loaded below
        connections.close_all()
        started = time.perf_counter()

        time.sleep(args.drop_after)
        ended = end_every_connection(args.database_server, BENCH_DATABASE)
        if connections["default"].pool:  # this script's own pool starts afresh: what is measured is evalhub's
            connections["default"].close_pool()
        during = asyncio.run(load_pages(server.url, session, args.page_loads, first_run, 1))
        after = asyncio.run(load_pages(server.url, session, args.page_loads, first_run, 1))
        print(f"  {time.perf_counter() - started:5.1f} s  ended {ended} PostgreSQL connections", flush=True)

        time.sleep(max(0.0, args.kill_after - (time.perf_counter() - started)))
        workers[0].send_signal(signal.SIGKILL)
        workers[0].wait(30)
        workers.append(start_worker(env, COMPOSE_CONCURRENCY))
        print(f"  {time.perf_counter() - started:5.1f} s  worker SIGKILLed, a new one started", flush=True)

        deadline = started + args.timeout
        while time.perf_counter() < deadline:
            states = job_states(job_ids)
            connections.close_all()
            if all(status in ("succeeded", "partial", "failed", "cancelled") for _, status, *_ in states):
                break
            done = sum(progress for _, _, progress, _, _ in states)
            print(f"  {time.perf_counter() - started:5.0f} s  {done} units settled  PostgreSQL {peaks.postgres}")
            time.sleep(5)
        took = time.perf_counter() - started
        peaks.stop.set()
        peaks.join()
        stored = units_twice(jobs)
        served = agents.stats().get("requests", "?")
        connections.close_all()

        print(
            f"\n{args.runs} debate runs × {args.debates} debates × 3 agents × up to {args.rounds} rounds, "
            f"and {args.others} each of DHP, YESciEval and generation beside, "
            f"queued at once on one worker of {COMPOSE_CONCURRENCY} threads (default pool); every connection ended at "
            f"{args.drop_after:.0f} s, the worker SIGKILLed at {args.kill_after:.0f} s"
        )
        for kind, status, progress, total, message in states:
            print(f"  {kind} job: {status} {progress}/{total} — {message}")
        succeeded = all(status == "succeeded" and progress == total for _, status, progress, total, _ in states)
        print(f"every job Succeeded n/n by itself: {'yes' if succeeded else 'NO'} ({took:.0f} s)")
        for label, statuses in (("as the connections ended", during), ("just after", after)):
            errors = sum(n for status, n in statuses.items() if not status.startswith(("2", "3", "4")))
            print(f"{args.page_loads} page loads {label}: {dict(statuses)}; 5xx or failed: {errors}")
        for what, (count, extra) in stored.items():
            print(f"{what} stored: {count} (stored twice: {extra})")
        twice = sum(extra for _, extra in stored.values())
        print(f"model calls served: {served} for {sum(count for count, _ in stored.values())} units stored")
        print(f"peak PostgreSQL connections: {peaks.peak_postgres}; peak Redis connections: {peaks.peak_redis}")
        failed_pages = sum(
            n
            for statuses in (during, after)
            for status, n in statuses.items()
            if not status.startswith(("2", "3", "4"))
        )
        if not succeeded or failed_pages or twice:
            raise SystemExit(1)
    finally:
        for worker in workers:
            if worker.poll() is None:
                worker.terminate()
                worker.wait(timeout=60)
        if server is not None:
            server.close()
        agents.close()
        peaks.stop.set()
        from django.db import connections

        connections.close_all()
        drop_database(args.database_server, BENCH_DATABASE)
        redis.Redis.from_url(args.redis_url).flushdb()


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
