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

The faults of issue 78 are scenarios too: sign-ins (`--sign-ins`) while every database connection is
ended again and again; and, with `--own-redis-port`, a Redis server of the benchmark's own (on that
port, no persistence) stopped and started again mid-run, with page loads while it is down and after,
and a job queued just before it stopped (its message lost with it): the seconds until a worker takes
that job's chunk.

    python benchmarks/deployment_load.py                      # 5 runs × 42 debates, as issue #54 saw
    python benchmarks/deployment_load.py --runs 2 --debates 10  # a quicker look
    python benchmarks/deployment_load.py --runs 1 --debates 6 --own-redis-port 6390 --database-name eh_load
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
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


def queue_one_generation(agents_url: str, name: str) -> int:
    """One generation run on the load's benchmark, queued (on commit): its job's id."""
    from django.db import transaction

    from evalhub.catalog.models import Benchmark
    from evalhub.generation.actions import do_create_generation_run, do_ensure_builtin_templates, do_register_candidate
    from evalhub.generation.config import GenerationConfig

    answer = {t.slug: t for t in do_ensure_builtin_templates()}["answer"]
    writer = do_register_candidate(f"openai-compatible:{agents_url}/v1|writer-{name}")
    config = GenerationConfig(benchmark=Benchmark.objects.get(slug="load"), candidates=[writer], template=answer)
    with transaction.atomic():
        return do_create_generation_run(config).job_id


def end_every_connection(server: str, database: str) -> int:
    """What a PostgreSQL restart does to the application: every backend of its database ended."""
    import psycopg

    with psycopg.connect(server, autocommit=True) as admin:
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()",
            (database,),
        ).fetchall()
    return len(rows)


class OwnRedis:
    """A redis-server of the benchmark's own on `port`, without persistence, so that it may be stopped and
    started again (a restart loses what it held, as a restart without persistence does)."""

    def __init__(self, port: int) -> None:
        self.port, self.url = port, f"redis://127.0.0.1:{port}/0"
        self.process: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        import redis

        command = ["redis-server", "--port", str(self.port), "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            try:
                redis.Redis.from_url(self.url).ping()
                return
            except redis.exceptions.ConnectionError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"redis-server did not start on port {self.port}") from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)


def sign_ins_while_cut(base: str, server: str, database: str, count: int, cuts: int = 4) -> Counter:
    """`cuts` times: `count` sign-ins at once (each its own client, as browsers are), and every connection
    to the database ended while they are in flight (checking their passwords): each POST's status."""
    import httpx

    async def one(client: httpx.AsyncClient, token: str) -> str:
        try:
            data = {"username": "signer", "password": SIGN_IN_PASSWORD, "csrfmiddlewaretoken": token}
            return str((await client.post("/login/", data=data)).status_code)
        except httpx.HTTPError as error:
            return type(error).__name__

    async def wave() -> list[str]:
        clients = [httpx.AsyncClient(base_url=base, timeout=120) for _ in range(count)]
        try:
            tokens = []
            for client in clients:  # each its sign-in page first: its CSRF cookie and token
                page = await client.get("/login/")
                token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
                tokens.append(token[1] if token else "")
            posts = asyncio.gather(*(one(client, token) for client, token in zip(clients, tokens, strict=True)))
            await asyncio.sleep(0.15)  # in flight: the password hash takes longer than this
            await asyncio.to_thread(end_every_connection, server, database)
            return list(await posts)
        finally:
            for client in clients:
                await client.aclose()

    statuses: Counter = Counter()
    for _ in range(cuts):
        statuses.update(asyncio.run(wave()))
    return statuses


SIGN_IN_PASSWORD = "load-test-password-7"


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


def seconds_until_taken(job_ids: list[int], since: float, timeout: float) -> float:
    """Seconds from `since` (perf_counter) until a worker has taken a chunk of each of these jobs."""
    from django.db import connections

    from evalhub.jobs.models import JobChunk

    while time.perf_counter() - since < timeout:
        taken = set(
            JobChunk.objects.filter(job_id__in=job_ids, claimed_at__isnull=False).values_list("job_id", flat=True)
        )
        connections.close_all()
        if taken >= set(job_ids):
            return time.perf_counter() - since
        time.sleep(1)
    return float("inf")


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
        "--own-redis-port",
        type=int,
        default=0,
        help="start a redis-server of its own on this port (in place of --redis-url) and restart it mid-run",
    )
    parser.add_argument("--database-name", default=BENCH_DATABASE, help="the database it makes and drops")
    parser.add_argument("--web-port", type=int, default=0, help="uvicorn's port (0: any free one)")
    parser.add_argument("--sign-ins", type=int, default=12, help="sign-ins while the connections are ended")
    parser.add_argument("--redis-down", type=float, default=5.0, help="seconds the own Redis stays stopped")
    parser.add_argument(
        "--database-server",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        help="a PostgreSQL URL; the benchmark makes and drops a database of its own there",
    )
    args = parser.parse_args()

    import redis

    own_redis = OwnRedis(args.own_redis_port) if args.own_redis_port else None
    if own_redis is not None:
        args.redis_url = own_redis.url
    database = args.database_name
    env = fresh_deployment(args.database_server, database, args.redis_url, "evalhub-bench-deployment")
    os.environ.pop("EVALHUB_DB_POOL_MAX_SIZE", None)  # the shipped defaults
    agents = ServerProcess(args.latency, args.chunk_delay, args.words, keep_alive=True)
    server = None
    workers = []
    peaks = Peaks(args.database_server, database, args.redis_url)
    signed: Counter = Counter()
    redis_down: Counter = Counter()
    redis_back: Counter = Counter()
    lost_job_taken_after: float | None = None
    try:
        setup_django(env)
        from django.db import connections

        from evalhub.debates.models import DebateRun

        session = session_for("reader", role="viewer")
        from django.contrib.auth.models import User

        User.objects.create_user(username="signer", password=SIGN_IN_PASSWORD)
        connections.close_all()
        peaks.start()
        server = Server(env, 2, args.web_port)
        workers.append(start_worker(env, COMPOSE_CONCURRENCY))
        jobs = make_load(args.runs, args.debates, agents.url, args.rounds, args.others)
        job_ids = [job_id for ids in jobs.values() for job_id in ids]
        first_run = DebateRun.objects.get(job_id=jobs["debates"][0]).pk  # its pages are loaded below
        connections.close_all()
        started = time.perf_counter()

        time.sleep(args.drop_after)
        ended = end_every_connection(args.database_server, database)
        if connections["default"].pool:  # this script's own pool starts afresh: what is measured is evalhub's
            connections["default"].close_pool()
        during = asyncio.run(load_pages(server.url, session, args.page_loads, first_run, 1))
        after = asyncio.run(load_pages(server.url, session, args.page_loads, first_run, 1))
        print(f"  {time.perf_counter() - started:5.1f} s  ended {ended} PostgreSQL connections", flush=True)
        signed = sign_ins_while_cut(server.url, args.database_server, database, args.sign_ins)
        print(f"  {time.perf_counter() - started:5.1f} s  sign-ins while connections were ended: {dict(signed)}")

        time.sleep(max(0.0, args.kill_after - (time.perf_counter() - started)))
        workers[0].send_signal(signal.SIGKILL)
        workers[0].wait(30)
        workers.append(start_worker(env, COMPOSE_CONCURRENCY))
        print(f"  {time.perf_counter() - started:5.1f} s  worker SIGKILLed, a new one started", flush=True)

        if own_redis is not None:  # a job queued, then Redis restarted: its message is lost with it
            lost = [queue_one_generation(agents.url, "lost")]
            job_ids += lost
            connections.close_all()
            own_redis.stop()
            redis_down = asyncio.run(load_pages(server.url, session, args.page_loads, first_run, 1))
            time.sleep(max(0.0, args.redis_down))
            own_redis.start()
            back_at = time.perf_counter()
            redis_back = asyncio.run(load_pages(server.url, session, args.page_loads, first_run, 1))
            print(f"  {time.perf_counter() - started:5.1f} s  Redis restarted", flush=True)
            lost_job_taken_after = seconds_until_taken(lost, back_at, args.timeout)
            print(f"  the job queued before the restart was taken {lost_job_taken_after:.0f} s after it", flush=True)

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
        print(f"{args.sign_ins} sign-ins at once, 4 times, every connection ended in flight: {dict(signed)}")
        if own_redis is not None:
            print(f"{args.page_loads} page loads while Redis was down: {dict(redis_down)}; after: {dict(redis_back)}")
            print(f"a job queued just before the restart was taken {lost_job_taken_after:.0f} s after Redis was back")
        for what, (count, extra) in stored.items():
            print(f"{what} stored: {count} (stored twice: {extra})")
        twice = sum(extra for _, extra in stored.values())
        print(f"model calls served: {served} for {sum(count for count, _ in stored.values())} units stored")
        print(f"peak PostgreSQL connections: {peaks.peak_postgres}; peak Redis connections: {peaks.peak_redis}")
        failed_pages = sum(
            n
            for statuses in (during, after, signed, redis_down, redis_back)
            for status, n in statuses.items()
            if not status.startswith(("2", "3", "4"))
        )
        print(f"5xx or failed during the faults, all scenarios: {failed_pages}")
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
        drop_database(args.database_server, database)
        if own_redis is not None:
            own_redis.stop()
        else:
            redis.Redis.from_url(args.redis_url).flushdb()


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
