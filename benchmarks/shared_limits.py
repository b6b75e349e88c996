"""Many worker processes against one provider limit, and one response cache for all of them.

A fake provider (its own process) declares limits — at most L calls and T tokens (a word is a
token there) in any window, a 429 with Retry-After beyond them, and OpenAI's x-ratelimit-* headers
on every answer — and N worker processes (started here) each make M calls with the same client
settings (`requests_per_minute`, `tokens_per_minute`, `max_concurrency`), twice, side by side in one
run:

- per process, against a provider that enforces its limits without rate-limit headers (as many
  self-hosted proxies do): each client keeps its own limits (embedded evalhub, or no Redis), N × the
  limit, and only 429s slow it down;
- per process, with the headers: each worker slows down when an answer says the budget is spent;
- shared: the limits live in Redis (evalhub.llm.shared_limits), as they do when REDIS_URL is set.

Reported: the most calls and tokens the provider saw in any window against its limits, its 429s,
the calls that failed, and the wall time. Then, with DATABASE_URL on PostgreSQL, the same calls
made again from other processes through the shared response cache
(evalhub.llm.cache.PostgresResponseCache): the provider sees none. Exits 1 when a bound is missed:
under the shared limits the provider refuses a call (a 429: it refills its budget as a bucket, so a
window's count may pass the limit by a call and still be within it) or a call fails, or a repeated
call reaches the provider.

    REDIS_URL=redis://127.0.0.1:6379/0 DATABASE_URL=postgres://postgres@127.0.0.1:5432/test \\
        python benchmarks/shared_limits.py --workers 4 --calls 60 --limit 120 --tokens 2400 --window 60
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
    url, shared, per_minute, tokens_per_minute, calls, worker, tag, dsn, table = sys.argv[1:10]
    cache = PostgresResponseCache(dsn, table) if dsn else None
    client = OpenAICompatibleChat("judge-0", base_url=url, requests_per_minute=float(per_minute),
                                  tokens_per_minute=float(tokens_per_minute) or None, max_concurrency=8,
                                  shared_limits_url=shared, cache=cache)
    async def one(i):
        await client.complete([{"role": "user", "content": f"{tag} call {worker}-{i}"}], max_tokens=16)
    outcomes = await asyncio.gather(*(one(i) for i in range(int(calls))), return_exceptions=True)
    await client.aclose()
    print(sum(isinstance(outcome, Exception) for outcome in outcomes), flush=True)  # calls that failed

asyncio.run(main())
"""


def peak(arrivals: list[tuple[float, int]], window: float) -> int:
    """The most weight (calls, or tokens) that arrived in any `window` seconds."""
    arrivals = sorted(arrivals)
    best, start, inside = 0, 0, 0
    for t, weight in arrivals:
        inside += weight
        while arrivals[start][0] <= t - window:
            inside -= arrivals[start][1]
            start += 1
        best = max(best, inside)
    return best


def stats(url: str) -> dict:
    with urllib.request.urlopen(f"{url}/stats") as response:
        return json.loads(response.read())


def run_workers(
    url: str, args: argparse.Namespace, shared: str, tag: str, dsn: str = "", table: str = ""
) -> tuple[float, int]:
    """Wall seconds, and the calls that failed."""
    per_minute = args.limit * 60 / args.window
    tokens_per_minute = args.tokens * 60 / args.window if args.tokens else 0
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
                str(tokens_per_minute),
                str(args.calls),
                str(n),
                tag,
                dsn,
                table,
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        for n in range(args.workers)
    ]
    failed = sum(int(worker.communicate(timeout=900)[0].split()[-1]) for worker in workers)
    return time.perf_counter() - start, failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--calls", type=int, default=40, help="calls per worker process")
    parser.add_argument("--limit", type=int, default=60, help="calls the provider allows in any window")
    parser.add_argument("--tokens", type=int, default=0, help="tokens the provider allows in any window (0: no limit)")
    parser.add_argument("--window", type=float, default=10.0, help="the provider's window in seconds")
    args = parser.parse_args()
    redis_url = os.environ.get("REDIS_URL", "")
    if not redis_url:
        sys.exit("Set REDIS_URL: the shared limits live in Redis.")
    tokens = f" and {args.tokens} tokens" if args.tokens else ""
    print(
        f"{args.workers} worker processes × {args.calls} calls; the provider allows {args.limit} calls{tokens} in any "
        f"{args.window:g} s ({args.limit * 60 / args.window:g} calls/min), and each client is told the same"
    )
    print(f"{'limits':<26}{'peak calls':>14}{'peak tokens':>15}{'429s':>7}{'failed':>8}{'wall s':>9}")
    missed: list[str] = []
    for label, shared, headers in (
        ("per process, no headers", "", False),
        ("per process", "", True),
        ("shared", redis_url, True),
    ):
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
                *(["--token-limit", str(args.tokens)] if args.tokens else []),
                *([] if headers else ["--no-limit-headers"]),
            ],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            url = server.stdout.readline().strip()
            wall, failed = run_workers(url, args, shared, secrets.token_hex(4))
            seen = stats(url)
            calls = peak([(t, 1) for t in seen["arrivals"]], args.window)
            used = peak([(t, n) for t, n in seen["token_log"]], args.window)
            print(
                f"{label:<26}{calls:>8} / {args.limit:<5}{used:>8} / {args.tokens or '-':<6}{seen['rate_limited']:>7}"
                f"{failed:>8}{wall:>9.1f}"
            )
            # The provider refills its budget as a bucket (a window may see a little more than the limit
            # and still be within it): the bound is what it says, no 429, and no call failed.
            if shared and (seen["rate_limited"] or failed):
                missed.append(f"shared limits: the provider refused {seen['rate_limited']} calls, {failed} failed")
        finally:
            server.terminate()
            server.wait(timeout=10)

    database_url = os.environ.get("DATABASE_URL", "")
    if not database_url.startswith("postgres"):
        print("(set DATABASE_URL to PostgreSQL to measure the shared response cache)")
        finish(missed)
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
        _, failed_first = run_workers(url, args, redis_url, tag, database_url, table)
        first = stats(url)["requests"]
        _, failed = run_workers(url, args, redis_url, tag, database_url, table)  # the same calls, new processes
        again = stats(url)["requests"] - first
        total = args.workers * args.calls
        # A call that failed was neither asked of the provider nor served: it is not counted as a hit.
        print(
            f"shared response cache: first pass {first} provider calls for {total} ({failed_first} failed); the "
            f"same {total} calls from {args.workers} new processes: {again} provider calls, {failed} failed, "
            f"{total - again - failed} served from the cache"
        )
        if again or failed:
            missed.append(f"shared response cache: {again} calls asked again, {failed} failed")
    finally:
        server.terminate()
        server.wait(timeout=10)
        with psycopg.connect(database_url, autocommit=True) as connection:
            connection.execute(f"DROP TABLE {table}")
    finish(missed)


def finish(missed: list[str]) -> None:
    """Exit 1 when a bound was missed: the shared limits let through no more than the provider allows
    and fail no call; the same calls from new processes are all served by the shared cache."""
    if missed:
        print("BOUND MISSED: " + "; ".join(missed))
        sys.exit(1)
    print(
        "bounds met: the provider refused nothing under the shared limits, no call failed, the cache served each repeat"
    )


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
