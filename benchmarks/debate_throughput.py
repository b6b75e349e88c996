"""Debate throughput: 1 debate vs N concurrent debates, against a fake OpenAI-compatible server.

Everything but the model is real: the OpenAI SDK client over loopback HTTP with streaming,
the debate runner and protocol, the database, the channel layer and WebSocket consumers
that receive each streamed chunk. The server answers each call after a fixed latency and
then streams its words; the three agents disagree, so every debate takes all its rounds
(N × 3 agents × 3 rounds calls).

Prints wall time for one debate and for N, their ratio (target: N=100 within 3.5× one
debate, restated for the SDK path: 3× before, with the hand client it replaced), calls/s, the
peak number of open connections to the server (bounded by the agents' concurrency limits), and
the p50/p95 delay from a chunk leaving the server to it reaching a connected WebSocket client.

The server keeps connections alive between calls, as providers do (`--connections close`
for one connection per call). The agents' calls go through the OpenAI SDK's streaming response on its
aiohttp client, as evalhub's OpenAI-style client makes them (`benchmarks/openai_stream_cpu.py` sets that
beside the hand client it replaced and the SDK's typed stream).

    python benchmarks/debate_throughput.py --debates 100 --latency 0.2
    python benchmarks/debate_throughput.py --debates 100 --load 6   # beside six busy processes
    python benchmarks/debate_throughput.py --debates 100 --load 7 --spin-up 180   # a load average of about 8

`--load N` runs N processes that only spin beside both measurements, as a loaded machine's other work
would (six on two cores brought the load average to about 8); the load average is printed at each one.

`--production` measures the compose shape instead of one process: a PostgreSQL database of its own, a
Redis database it flushes (broker and channel layer), `--workers` Celery workers as docker-compose.yml
runs them (threads pool, 16 threads), each run started as the Start button starts it and timed to its
job's end, the watching sockets in this process receiving the turns through Redis:

    python benchmarks/debate_throughput.py --production --workers 2 --debates 100 --load 7 --spin-up 180
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

PRODUCTION_DATABASE = "evalhub_bench_debates"
early = argparse.ArgumentParser(add_help=False)
early.add_argument("--production", action="store_true")
early.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
early.add_argument(
    "--database-server", default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
)
deployment, _ = early.parse_known_args()
if deployment.production:  # the compose shape: a database and a Redis database of its own, Celery workers
    from benchmarks.adjudication_load import cpu_seconds as process_cpu_seconds
    from benchmarks.adjudication_load import drop_database, fresh_deployment, setup_django

    PRODUCTION_ENV = fresh_deployment(
        deployment.database_server, PRODUCTION_DATABASE, deployment.redis_url, "evalhub-bench-debates"
    )
    setup_django(PRODUCTION_ENV)
else:
    # A worker process (--workers N) shares the parent's database: the parent names its data directory.
    os.environ["EVALHUB_DATA_DIR"] = os.environ.get("EVALHUB_BENCH_DATA_DIR") or tempfile.mkdtemp(
        prefix="evalhub-bench-"
    )
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")
    for variable in ("DATABASE_URL", "REDIS_URL"):
        os.environ.pop(variable, None)  # the embedded mode: one process, in-memory channel layer

    import django

    django.setup()

from channels.testing import WebsocketCommunicator  # noqa: E402
from django.contrib.auth.models import User  # noqa: E402
from django.core.management import call_command  # noqa: E402
from measured import machine  # noqa: E402  (benchmarks/, beside this script)

from evalhub.catalog.demo import do_load_builtin_criteria  # noqa: E402
from evalhub.catalog.models import Benchmark, Criterion, LanguageModel, Prompt, Response  # noqa: E402
from evalhub.debates.actions import DEBATES_PER_TASK, do_create_run, do_start_run  # noqa: E402
from evalhub.debates.consumers import DebateConsumer  # noqa: E402
from evalhub.debates.runner import run_debates  # noqa: E402
from evalhub.llm.cache import cache_thread  # noqa: E402
from evalhub.llm.testing import ServerProcess  # noqa: E402

WORD = re.compile(r"w\d+")


def in_worker_processes(ids: list[int], workers: int) -> tuple[float, float]:
    """The debates split over `workers` processes started beforehand (each imports Django and opens
    the database first, like a worker that is up), released together; (wall seconds, their CPU seconds)."""
    parts = [ids[i::workers] for i in range(workers)]
    env = {**os.environ, "EVALHUB_BENCH_DATA_DIR": os.environ["EVALHUB_DATA_DIR"]}
    children = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker-part", ",".join(map(str, part)), "--workers", "1"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        for part in parts
    ]
    for child in children:
        assert child.stdout.readline().strip() == "ready"
    started = time.perf_counter()
    for child in children:
        child.stdin.write("go\n")
        child.stdin.flush()
    outputs = [child.communicate()[0] for child in children]
    elapsed = time.perf_counter() - started
    if any(child.returncode for child in children):
        raise SystemExit(f"a worker process failed: {outputs}")
    return elapsed, sum(float(out.strip().splitlines()[-1]) for out in outputs)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def create_run(debates: int, server_url: str, concurrency: int, name: str, *, start: bool = True):
    benchmark, _ = Benchmark.objects.get_or_create(slug="bench", defaults={"name": "bench"})
    a, _ = LanguageModel.objects.get_or_create(slug="model-a", defaults={"display_name": "A"})
    b, _ = LanguageModel.objects.get_or_create(slug="model-b", defaults={"display_name": "B"})
    start = Prompt.objects.filter(benchmark=benchmark).count()
    for index in range(start, start + debates):
        prompt = Prompt.objects.create(
            benchmark=benchmark, external_id=f"{name}-{index}", text=f"Question {index}?", category=name
        )
        Response.objects.create(prompt=prompt, model=a, text=f"Answer A to {index}.")
        Response.objects.create(prompt=prompt, model=b, text=f"Answer B to {index}.")
    agents = [
        {
            "provider": "openai-compatible",
            "model": f"judge-{i}",
            "base_url": f"{server_url}/v1",
            "max_concurrency": concurrency,
        }
        for i in range(3)
    ]
    run = do_create_run(
        name=name,
        benchmark=benchmark,
        criterion=Criterion.objects.get(slug="helpfulness"),
        model_a=a,
        model_b=b,
        agents=agents,
        rounds=3,
        category=name,
    )
    if not start:  # a draft: --production starts it as the Start button does, its chunks enqueued
        return run
    return do_start_run(run, enqueue=False)  # its job and chunks; the benchmark works the debates itself


CONNECT_TIMEOUT_S = 30.0


async def watch(debate_ids: list[int], user, received: dict[str, float], stop: asyncio.Event) -> None:
    """Connected browsers: one socket per debate, recording when each streamed word arrives."""
    sockets = []
    for debate_id in debate_ids:
        communicator = WebsocketCommunicator(DebateConsumer.as_asgi(), f"/ws/debates/{debate_id}/")
        communicator.scope["user"] = user
        communicator.scope["url_route"] = {"kwargs": {"debate_id": debate_id}}
        # A loaded machine takes longer than the communicator's default second to accept a socket: one
        # run failed there before any figure (issue 79). A browser waits as long; so does this.
        connected, _ = await communicator.connect(timeout=CONNECT_TIMEOUT_S)
        assert connected
        sockets.append(communicator)

    async def drain(communicator):
        # Wait on the socket's queue directly: receive_from() with a timeout would cancel the consumer,
        # and polling would take the CPU the debates need.
        while True:
            event = await communicator.output_queue.get()
            now = time.time()
            message = event.get("text", "")
            if "turn-slot-" in message:  # a turn under way: its whole text so far
                for word in WORD.findall(message):
                    received.setdefault(word, now)

    drains = [asyncio.create_task(drain(s)) for s in sockets]
    await stop.wait()
    await asyncio.sleep(0.5)  # the last fragments in flight
    for task in drains:
        task.cancel()
    for communicator in sockets:
        await communicator.disconnect()


async def measure(ids: list[int], user, watched: int) -> tuple[float, dict[str, float]]:
    received: dict[str, float] = {}
    stop = asyncio.Event()
    watcher = asyncio.create_task(watch(ids[:watched], user, received, stop))
    await asyncio.sleep(0.2)  # sockets connected and draining
    started = time.perf_counter()
    statuses = await asyncio.to_thread(run_debates, ids)  # as a worker thread would
    elapsed = time.perf_counter() - started
    stop.set()
    await watcher
    assert set(statuses.values()) == {"unresolved"}, statuses
    return elapsed, received


def started_and_finished(run) -> float:
    """Start a draft run as the Start button does (its chunks enqueued on commit, for the Celery
    workers) and wait until its job has finished: the seconds from the start to the job's end."""
    from evalhub.debates.models import DebateRun

    started = time.perf_counter()
    do_start_run(run)
    while not DebateRun.objects.select_related("job").get(pk=run.pk).job.finished:
        time.sleep(0.02)
    elapsed = time.perf_counter() - started
    job = DebateRun.objects.select_related("job").get(pk=run.pk).job
    statuses = set(run.debates.values_list("status", flat=True))
    assert statuses == {"unresolved"}, (job.status_words, job.message, statuses)
    return elapsed


def on_workers(run, user, watched: int) -> tuple[float, dict[str, float]]:
    """`measure` for --production: the workers run the debates, and the watching sockets here receive
    their streamed turns through Redis, as a browser's socket on a web process does."""
    ids = list(run.debates.order_by("id").values_list("id", flat=True))
    return asyncio.run(_on_workers(run, ids, user, watched))


async def _on_workers(run, ids: list[int], user, watched: int) -> tuple[float, dict[str, float]]:
    received: dict[str, float] = {}
    stop = asyncio.Event()
    watcher = asyncio.create_task(watch(ids[:watched], user, received, stop))
    await asyncio.sleep(0.5)  # sockets connected and subscribed to their debates' groups in Redis
    elapsed = await asyncio.to_thread(started_and_finished, run)
    stop.set()
    await watcher
    return elapsed, received


def start_celery_workers(count: int, threads: int) -> list[subprocess.Popen]:
    """`count` workers as docker-compose.yml's `worker` service runs them (threads pool), ready when
    each answers a ping."""
    from evalhub.celery import app

    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "evalhub.celery",
        "--quiet",
        "worker",
        "-Q",
        "default",
        "--pool=threads",
    ]
    command += [f"--concurrency={threads}", "--loglevel=WARNING", "--without-mingle", "--without-gossip"]
    root = Path(__file__).resolve().parent.parent
    workers = [
        subprocess.Popen([*command, "-n", f"bench{index}@%h"], cwd=root, env={**os.environ, **PRODUCTION_ENV})
        for index in range(count)
    ]
    deadline = time.monotonic() + 120
    while len(app.control.ping(timeout=1.0)) < count:
        if time.monotonic() > deadline or any(worker.poll() is not None for worker in workers):
            raise SystemExit("the Celery workers did not start")
    return workers


def workers_cpu(workers: list[subprocess.Popen]) -> float:
    return sum(process_cpu_seconds(worker.pid) for worker in workers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--debates", type=int, default=100)
    parser.add_argument("--latency", type=float, default=0.2, help="server seconds before the first byte")
    parser.add_argument("--words", type=int, default=20, help="words streamed per answer")
    parser.add_argument("--chunk-delay", type=float, default=0.005, help="seconds between streamed words")
    parser.add_argument("--concurrency", type=int, default=128, help="per-agent limit on calls in flight")
    parser.add_argument("--watched", type=int, default=20, help="debates with a connected WebSocket client")
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        help="worker processes that share the N debates (one per core, as production runs them); with more than "
        "one, no socket watches (the embedded channel layer lives in one process); with --production, the Celery "
        "workers",
    )
    parser.add_argument("--load", type=int, default=0, help="busy processes beside the measurements")
    parser.add_argument(
        "--production",
        action="store_true",
        help="the compose shape: PostgreSQL (a database of its own on --database-server), Redis (--redis-url, "
        "flushed), --workers Celery workers of --worker-threads threads running the started run's chunks, the "
        "sockets receiving through Redis; the times run from the Start to the job's end",
    )
    parser.add_argument("--redis-url", default=deployment.redis_url, help="a Redis database it may flush")
    parser.add_argument("--database-server", default=deployment.database_server)
    parser.add_argument("--worker-threads", type=int, default=16, help="as docker-compose.yml's worker")
    parser.add_argument(
        "--spin-up",
        type=float,
        default=30.0,
        help="seconds the busy processes spin before the first measurement: the one-minute load average "
        "reaches about 63 %% of their number in 60 s, 95 %% in 180",
    )
    parser.add_argument("--worker-part", default="", help=argparse.SUPPRESS)  # internal: debate ids for a child
    parser.add_argument(
        "--connections",
        choices=("keep-alive", "close"),
        default="keep-alive",
        help="the server streams chunked on connections that stay open, as providers do, or closes each after its call",
    )
    args = parser.parse_args()
    if args.worker_part:  # a child of --workers: get ready, wait for the go, run its share, report its CPU
        ids = [int(i) for i in args.worker_part.split(",")]
        import aiohttp  # noqa: F401  (what a worker that is up has imported already)

        assert Prompt.objects.filter(debates__in=ids).count() == len(ids)  # the database is open
        print("ready", flush=True)
        sys.stdin.readline()
        started = cpu_seconds()
        statuses = run_debates(ids)
        assert set(statuses.values()) == {"unresolved"}, statuses
        print(f"{cpu_seconds() - started:.3f}")
        return

    if not deployment.production:
        call_command("migrate", verbosity=0)  # setup_django migrated the production database
    do_load_builtin_criteria()
    user = User.objects.create_superuser("bench", password="x")
    server = ServerProcess(args.latency, args.chunk_delay, args.words, args.connections == "keep-alive")
    spinning = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
    workers: list[subprocess.Popen] = []
    try:
        if deployment.production:
            workers = start_celery_workers(args.workers, args.worker_threads)
            # Every worker's imports, connections and templates: a chunk of debates for each of them.
            warm = create_run(DEBATES_PER_TASK * args.workers, server.url, args.concurrency, "warm-up", start=False)
            on_workers(warm, user, 1)
        else:
            warm_ids = list(create_run(1, server.url, args.concurrency, "warm-up").debates.values_list("id", flat=True))
            asyncio.run(measure(warm_ids, user, 1))  # imports, first connections, template loading
        if spinning:
            time.sleep(args.spin_up)  # the load average follows the busy processes over a minute
        print(f"before 1 debate: {machine()}")
        if deployment.production:
            one, _ = on_workers(create_run(1, server.url, args.concurrency, "one", start=False), user, 1)
        else:
            one_ids = list(create_run(1, server.url, args.concurrency, "one").debates.values_list("id", flat=True))
            one, _ = asyncio.run(measure(one_ids, user, 1))
        print(f"before {args.debates} debates: {machine()}")
        many_run = create_run(args.debates, server.url, args.concurrency, "many", start=not deployment.production)
        many_ids = list(many_run.debates.values_list("id", flat=True))
        before, app_before = server.stats(), cpu_seconds()
        if deployment.production:
            workers_before = workers_cpu(workers)
            many, received = on_workers(many_run, user, args.watched)
            app_cpu = workers_cpu(workers) - workers_before
            sockets_cpu = cpu_seconds() - app_before
        elif args.workers > 1:
            many, app_cpu = in_worker_processes(many_ids, args.workers)
            received: dict[str, float] = {}
        else:
            many, received = asyncio.run(measure(many_ids, user, args.watched))
            cache_thread().submit(lambda: None).result()  # the cache writes not waited for are counted too
            app_cpu = cpu_seconds() - app_before
        stats = server.stats()
        print(f"after {args.debates} debates: {machine()}")
    finally:
        for process in spinning:
            process.kill()
            process.wait()
        for worker in workers:
            worker.terminate()
            worker.wait(timeout=60)
        server.close()
        if deployment.production:
            import redis
            from django.db import connections

            connections.close_all()
            drop_database(deployment.database_server, PRODUCTION_DATABASE)
            redis.Redis.from_url(deployment.redis_url).flushdb()
    calls, peak, chunk_log = stats["requests"] - before["requests"], stats["peak_connections"], stats["chunk_log"]
    opened = stats["connections_opened"] - before["connections_opened"]
    server_cpu = stats["cpu_s"] - before["cpu_s"]
    sent = {word: at for word, at in chunk_log}
    delays = sorted((received[word] - sent[word]) * 1000 for word in received if word in sent)
    p95 = delays[int(0.95 * (len(delays) - 1))] if delays else float("nan")
    print(f"server latency {args.latency * 1000:.0f} ms + {args.words} streamed words per answer; 3 agents × 3 rounds")
    print(f"1 debate:    {one:6.2f} s")
    print(f"{args.debates} debates: {many:6.2f} s  → {many / one:.2f}× one debate (target ≤ 3.5×)")
    print(
        f"calls: {calls} in {many:.2f} s = {calls / many:.0f} calls/s; connections opened {opened} "
        f"({'kept alive' if args.connections == 'keep-alive' else 'one per call'}); peak open {peak} over the "
        f"whole run (bound: 3 agents × {args.concurrency} in flight)"
    )
    # Python runs one thread at a time per process: the app's CPU time bounds how fast N debates can
    # go however much the calls overlap, and the fake server needs CPU of its own beside it.
    print(
        f"CPU during the {args.debates} debates: app {app_cpu:.2f} s ({1000 * app_cpu / calls:.1f} ms per call: "
        f"client, database, channel layer, sockets), fake server {server_cpu:.2f} s; {os.cpu_count()} cores here"
    )
    if deployment.production:
        print(
            f"{args.workers} Celery worker(s) (threads pool, {args.worker_threads} threads each) on PostgreSQL and "
            f"Redis; the CPU above is theirs; the watching sockets' process {sockets_cpu:.2f} s"
        )
    elif args.workers > 1:
        print(f"{args.workers} worker processes shared the {args.debates} debates; no socket watched")
        return
    print(
        f"chunk → WebSocket delay over {len(delays)} chunks on {args.watched} watched debates: "
        f"p50 {statistics.median(delays):.1f} ms, p95 {p95:.1f} ms"
    )


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
