"""Many worker processes against one provider limit, and one response cache for all of them.

A fake provider (its own process) declares a limit — at most L calls in any window, a 429 with
Retry-After beyond it — and N worker processes (started here) each make M calls with the same
client settings (`requests_per_minute`, `max_concurrency`), twice, side by side in one run:

- per process: each client keeps its own limiter (embedded evalhub, or no Redis): N × the limit;
- shared: the limits live in Redis (evalhub.llm.shared_limits), as they do when REDIS_URL is set.

Reported: the most calls the provider saw in any window against its limit, its 429s, and the
wall time. Then, with DATABASE_URL on PostgreSQL, the same calls made again from other processes
through the shared response cache (evalhub.llm.cache.PostgresResponseCache): the provider sees none.

    REDIS_URL=redis://127.0.0.1:6379/0 DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \\
        python benchmarks/shared_limits.py --workers 4 --calls 40 --limit 60 --window 10
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

WORKER = """
import asyncio, json, sys
from evalhub.llm.cache import PostgresResponseCache
from evalhub.llm.providers.openai_chat import OpenAICompatibleChat

async def main():
    url, shared, per_minute, calls, worker, tag, dsn, table = sys.argv[1:9]
    cache = PostgresResponseCache(dsn, table) if dsn else None
    client = OpenAICompatibleChat("judge-0", base_url=url, requests_per_minute=float(per_minute), max_concurrency=8,
                                  shared_limits_url=shared, cache=cache)
    async def one(i):
        await client.complete([{"role": "user", "content": f"{tag} call {worker}-{i}"}])
    await asyncio.gather(*(one(i) for i in range(int(calls))))
    await client.aclose()

asyncio.run(main())
"""


def peak(arrivals: list[float], window: float) -> int:
    arrivals = sorted(arrivals)
    best, start = 0, 0
    for end, t in enumerate(arrivals):
        while arrivals[start] <= t - window:
            start += 1
        best = max(best, end - start + 1)
    return best


def stats(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/stats") as response:
        return json.loads(response.read())


def run_workers(url: str, args: argparse.Namespace, shared: str, tag: str, dsn: str = "", table: str = "") -> float:
    per_minute = args.limit * 60 / args.window
    start = time.perf_counter()
    workers = [
        subprocess.Popen(
            [
                sys.executable,
                "-c",
                WORKER,
                f"{url}/v1",
                shared,
                str(per_minute),
                str(args.calls),
                str(n),
                tag,
                dsn,
                table,
            ],
            cwd=ROOT,
        )
        for n in range(args.workers)
    ]
    for worker in workers:
        worker.wait(timeout=600)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--calls", type=int, default=40, help="calls per worker process")
    parser.add_argument("--limit", type=int, default=60, help="calls the provider allows in any window")
    parser.add_argument("--window", type=float, default=10.0, help="the provider's window in seconds")
    args = parser.parse_args()
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url:
        sys.exit("Set REDIS_URL: the shared limits live in Redis.")
    print(
        f"{args.workers} worker processes × {args.calls} calls; the provider allows {args.limit} calls in any "
        f"{args.window:g} s ({args.limit * 60 / args.window:g}/min), and each client is told the same"
    )
    print(f"{'limits':<14}{'peak in a window':>18}{'429s':>8}{'wall s':>9}")
    for label, shared in (("per process", ""), ("shared", redis_url)):
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "evalhub.llm.testing",
                "--latency",
                "0.05",
                "--words",
                "5",
                "--keep-alive",
                "--rate-limit",
                str(args.limit),
                "--rate-window",
                str(args.window),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            url = server.stdout.readline().strip()
            wall = run_workers(url, args, shared, secrets.token_hex(4))
            seen = stats(url)
            print(
                f"{label:<14}{peak(seen['arrivals'], args.window):>12} / {args.limit:<4}{seen['rate_limited']:>8}"
                f"{wall:>9.1f}"
            )
        finally:
            server.terminate()
            server.wait(timeout=10)

    database_url = os.environ.get("DATABASE_URL", "")
    if not database_url.startswith("postgres"):
        print("(set DATABASE_URL to PostgreSQL to measure the shared response cache)")
        return
    import psycopg

    table = f"bench_llm_cache_{secrets.token_hex(3)}"
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute(
            f"CREATE TABLE {table} (key varchar(64) PRIMARY KEY, completion text NOT NULL, "
            "created_at timestamptz NOT NULL)"
        )
    server = subprocess.Popen(
        [sys.executable, "-m", "evalhub.llm.testing", "--latency", "0.05", "--words", "5", "--keep-alive"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url, tag = server.stdout.readline().strip(), secrets.token_hex(4)
        run_workers(url, args, redis_url, tag, database_url, table)
        first = stats(url)["requests"]
        run_workers(url, args, redis_url, tag, database_url, table)  # the same calls, from new processes
        again = stats(url)["requests"] - first
        total = args.workers * args.calls
        print(
            f"shared response cache: first pass {first} provider calls for {total}; the same {total} calls from "
            f"{args.workers} new processes: {again} provider calls, {total - again} served from the cache"
        )
    finally:
        server.terminate()
        server.wait(timeout=10)
        with psycopg.connect(database_url, autocommit=True) as connection:
            connection.execute(f"DROP TABLE {table}")


if __name__ == "__main__":
    main()
