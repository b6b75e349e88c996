"""Connections under load: page loads during a streaming debate run, and many debates in flight on one worker.

A production-like deployment on this machine: a database of its own on the PostgreSQL server it is
given (dropped at the end), a Redis database of its own (flushed before and after), `uvicorn
--workers 2` and one real Celery worker (`--pool=threads`), with the settings as shipped
(EVALHUB_DB_POOL_MAX_SIZE, EVALHUB_REDIS_MAX_CONNECTIONS). The agents are the fake
OpenAI-compatible server in a process of its own, streaming word by word after a latency.

1. A run of `--debates` debates starts; the worker's threads each take a chunk of 25, so with
   `--concurrency 40` a thousand debates are in flight at once (each agent's turn streams to the
   channel layer word by word).
2. While they stream, `--page-loads` page loads arrive at once (the leaderboards, the run's page, a
   debate's page, the jobs list, in turn).

Every quarter second it counts the connections to the benchmark's PostgreSQL database
(pg_stat_activity) and to Redis (CLIENT LIST, less the clients that were there before it started).
It prints the peaks, the bounds the settings promise, the status codes of the page loads (0 5xx is
the target) and how the run ended.

    python benchmarks/connection_load.py --debates 1000 --concurrency 40 --page-loads 100
    python benchmarks/connection_load.py --debates 100 --concurrency 4 --page-loads 100   # a quicker look
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.adjudication_load import (  # noqa: E402
    ROOT,
    Server,
    drop_database,
    fresh_deployment,
    session_for,
    setup_django,
)
from evalhub.llm.testing import ServerProcess  # noqa: E402

BENCH_DATABASE = "evalhub_bench_connections"
PAGES = ("/leaderboards/", "/debates/runs/{run}/", "/debates/{debate}/", "/jobs/")


class Peaks(threading.Thread):
    """Samples the connections to PostgreSQL's benchmark database and to Redis every `interval` s."""

    def __init__(self, server: str, database: str, redis_url: str, interval: float = 0.25) -> None:
        super().__init__(daemon=True)
        import psycopg
        import redis

        self.pg = psycopg.connect(server, autocommit=True)  # to another database: not counted
        self.redis = redis.Redis.from_url(redis_url)
        self.database, self.interval = database, interval
        self.redis_before = self.redis_clients()
        self.postgres = self.redis_now = 0
        self.peak_postgres = self.peak_redis = 0
        self.peak_commands: Counter = Counter()  # Redis clients at the peak, by name or last command
        self.stop = threading.Event()

    def redis_clients(self) -> int:
        clients = self.redis.client_list()
        self.last_commands = Counter(client["name"] or client["cmd"] for client in clients)
        return len(clients) - 1  # not this sampler's own

    def run(self) -> None:
        while not self.stop.wait(self.interval):
            row = self.pg.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s", (self.database,))
            self.postgres = int(row.fetchone()[0])
            self.redis_now = self.redis_clients() - self.redis_before
            self.peak_postgres = max(self.peak_postgres, self.postgres)
            if self.redis_now > self.peak_redis:
                self.peak_redis, self.peak_commands = self.redis_now, self.last_commands


def make_run(debates: int, agents_url: str, rounds: int) -> tuple[int, int]:
    from evalhub.catalog.demo import do_load_builtin_criteria
    from evalhub.catalog.models import Benchmark, Criterion, LanguageModel, Prompt, Response
    from evalhub.debates.actions import do_create_run, do_start_run

    do_load_builtin_criteria()
    benchmark = Benchmark.objects.create(slug="load", name="load")
    a = LanguageModel.objects.create(slug="model-a", display_name="A")
    b = LanguageModel.objects.create(slug="model-b", display_name="B")
    prompts = Prompt.objects.bulk_create(
        Prompt(benchmark=benchmark, external_id=str(i), text=f"Question {i}?") for i in range(debates)
    )
    Response.objects.bulk_create(
        Response(prompt=prompt, model=model, text=f"Answer {model.display_name} to {prompt.external_id}.")
        for prompt in prompts
        for model in (a, b)
    )
    agent = {"provider": "openai-compatible", "base_url": f"{agents_url}/v1", "max_concurrency": 4 * debates}
    run = do_create_run(
        name="load",
        benchmark=benchmark,
        criterion=Criterion.objects.get(slug="helpfulness"),
        model_a=a,
        model_b=b,
        agents=[{**agent, "model": f"judge-{i}"} for i in range(3)],
        rounds=rounds,
    )
    run = do_start_run(run)  # enqueued on commit, as the Start button does
    return run.pk, run.debates.order_by("id").values_list("id", flat=True)[0]


def start_worker(env: dict[str, str], concurrency: int) -> subprocess.Popen:
    command = [sys.executable, "-m", "celery", "-A", "evalhub.celery", "worker", "-Q", "default"]
    command += ["--pool=threads", f"--concurrency={concurrency}", "--loglevel=WARNING", "--without-mingle"]
    return subprocess.Popen(command, cwd=ROOT, env={**os.environ, **env})


async def load_pages(base: str, session: str, count: int, run: int, debate: int) -> Counter:
    import httpx

    async with httpx.AsyncClient(base_url=base, cookies={"sessionid": session}, timeout=120) as client:

        async def one(index: int) -> str:
            path = PAGES[index % len(PAGES)].format(run=run, debate=debate)
            try:
                return str((await client.get(path)).status_code)
            except httpx.HTTPError as error:
                return type(error).__name__

        return Counter(await asyncio.gather(*(one(i) for i in range(count))))


def wait_for_job(run_id: int, timeout: float, peaks: Peaks) -> tuple[str, float]:
    from evalhub.debates.models import DebateRun

    started = time.perf_counter()
    while time.perf_counter() - started < timeout:
        job = DebateRun.objects.select_related("job").get(pk=run_id).job
        if job.finished:
            return f"{job.status_words}: {job.message}", time.perf_counter() - started
        print(
            f"  {time.perf_counter() - started:5.0f} s  {job.progress_done:5d} of {job.progress_total} debates"
            f"  PostgreSQL {peaks.postgres:3d}  Redis {peaks.redis_now:4d}",
            flush=True,
        )
        time.sleep(5)
    return "did not finish in time", timeout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debates", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=40, help="worker threads (each runs a chunk of 25)")
    parser.add_argument("--page-loads", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--latency", type=float, default=3.0, help="seconds before an agent's first word")
    parser.add_argument("--words", type=int, default=12)
    parser.add_argument("--chunk-delay", type=float, default=0.2, help="seconds between streamed words")
    parser.add_argument("--web-workers", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=900)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/14", help="a Redis database it may flush")
    parser.add_argument(
        "--database-server",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        help="a PostgreSQL URL; the benchmark makes and drops a database of its own there",
    )
    args = parser.parse_args()

    import redis

    env = fresh_deployment(args.database_server, BENCH_DATABASE, args.redis_url, "evalhub-bench-connections")
    agents = ServerProcess(args.latency, args.chunk_delay, args.words, keep_alive=True)
    server = worker = None
    peaks = Peaks(args.database_server, BENCH_DATABASE, args.redis_url)
    try:
        setup_django(env)
        from django.conf import settings
        from django.db import connections

        pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool") or {}
        session = session_for("reader", role="viewer")
        connections.close_all()
        peaks.start()
        server = Server(env, args.web_workers)
        worker = start_worker(env, args.concurrency)
        run_id, debate_id = make_run(args.debates, agents.url, args.rounds)
        connections.close_all()
        started = time.perf_counter()
        time.sleep(args.latency + 3 * args.chunk_delay)  # the first chunks' turns are streaming
        statuses = asyncio.run(load_pages(server.url, session, args.page_loads, run_id, debate_id))
        pages_s = time.perf_counter() - started
        outcome, run_s = wait_for_job(run_id, args.timeout, peaks)
        peaks.stop.set()
        peaks.join()
        served = agents.stats()
        server_errors = sum(n for status, n in statuses.items() if not status.startswith(("2", "3", "4")))
        print(
            f"\n{args.debates} debates × 3 agents × {args.rounds} round(s) on one worker of {args.concurrency} threads "
            f"(chunks of 25); agents: {args.latency} s latency, {args.words} words {args.chunk_delay} s apart"
        )
        print(f"run: {outcome} in {run_s:.0f} s; the agents served {served.get('requests', '?')} calls")
        print(f"{args.page_loads} page loads at once, {pages_s:.1f} s after the start: {dict(statuses)}")
        print(f"  5xx or failed: {server_errors}")
        from evalhub.db_pool import connections_needed

        web_pool = pool.get("max_size", 0)
        worker_pool = max(web_pool, connections_needed(args.concurrency, "threads"))  # fit_pool_to_worker
        import psycopg

        with psycopg.connect(args.database_server, autocommit=True) as admin:
            server_limit = admin.execute("SHOW max_connections").fetchone()[0]
        print(
            f"peak PostgreSQL connections: {peaks.peak_postgres} (bound: {args.web_workers} web processes × a pool of "
            f"{web_pool}, the worker's pool fitted to its {args.concurrency} threads: {worker_pool}, 4 for its "
            f"response cache, and the benchmark's own; the server's max_connections: {server_limit})"
        )
        print(
            f"peak Redis connections: {peaks.peak_redis} beyond the {peaks.redis_before} before "
            f"(per process: EVALHUB_REDIS_MAX_CONNECTIONS={settings.EVALHUB_REDIS_MAX_CONNECTIONS} for live sends and "
            "as many for the cache, 10 for provider limits; a web process's sockets receive on their own loop)"
        )
        print(f"  by name (else the last command each sent): {dict(peaks.peak_commands.most_common(8))}")
        if server_errors or outcome.startswith("did not"):
            raise SystemExit(1)
    finally:
        for process in (worker,):
            if process is not None:
                process.terminate()
                process.wait(timeout=60)
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
