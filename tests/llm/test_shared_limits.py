"""Provider limits held by every worker at once, in Redis (issue 25): the request and token rates
across two processes, a killed worker's in-flight slot coming back, and a Retry-After or spent
rate-limit headers heard by all."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from evalhub.llm import shared_limits
from evalhub.llm.providers.openai_chat import OpenAICompatibleChat
from evalhub.llm.retry import RetryPolicy
from evalhub.llm.shared_limits import SharedLimits
from evalhub.llm.testing import Fail, FakeLLMServer, openai_limit_headers

REDIS_URL = os.environ.get("REDIS_URL", "")
ROOT = Path(__file__).resolve().parent.parent.parent
pytestmark = pytest.mark.skipif(not REDIS_URL, reason="the shared limits live in Redis: REDIS_URL=redis://…")

# Ten starts in a row, each let through by the limit named in argv[3]: "requests" at 600 a minute
# (one every 0.1 s) or "tokens", 10 a call at 6,000 a minute (100 a second) with 50 of burst.
START_TEN_TIMES = """
import asyncio, sys, time
from evalhub.llm.shared_limits import SharedLimits

async def main():
    limits = SharedLimits(sys.argv[1], "openai", "m", sys.argv[2], token_burst_s=0.5)
    print("ready", flush=True)
    sys.stdin.readline()  # both processes start together
    for _ in range(10):
        if sys.argv[3] == "requests":
            await limits.wait_for_rate(600)
        else:
            await limits.take_tokens(6000, 10)
        print(time.time(), flush=True)
    await limits.aclose()

asyncio.run(main())
"""

HOLD_A_SLOT = """
import asyncio, sys
from evalhub.llm.shared_limits import SharedLimits

async def main():
    limits = SharedLimits(sys.argv[1], "openai", "m", sys.argv[2], hold_s=1.0)
    async with limits.slot(1):
        print("held", flush=True)
        await asyncio.sleep(60)  # killed here: the slot is never given back

asyncio.run(main())
"""


def together(limit: str, key: str) -> list[float]:
    """Start two processes making ten starts under `limit`, let them go at once, and return every
    time either started."""
    workers = [worker(START_TEN_TIMES, key, limit) for _ in range(2)]
    for process in workers:
        assert process.stdout.readline().strip() == "ready"
    for process in workers:
        process.stdin.write("go\n")
        process.stdin.flush()
    return sorted(float(line) for process in workers for line in process.communicate(timeout=30)[0].split())


def worker(script: str, key: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", script, REDIS_URL, key, *args],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )


def test_two_worker_processes_together_start_no_more_calls_than_the_limit():
    started = together("requests", secrets.token_hex(4))
    assert len(started) == 20
    # 600 a minute: any 11 starts span at least 1 s, whichever processes made them (a little slack
    # for a process that printed its start late under load).
    spans = [started[i + 10] - started[i] for i in range(len(started) - 10)]
    assert min(spans) > 0.85, spans
    assert started[-1] - started[0] > 1.7


def test_two_worker_processes_together_use_no_more_tokens_than_the_budget():
    started = together("tokens", secrets.token_hex(4))
    assert len(started) == 20
    # 20 calls of 10 tokens at 100 a second with 50 of burst: between any two starts, the calls
    # started take no more than the budget earned meanwhile, the burst and the one that went over.
    for i in range(len(started)):
        for j in range(i + 1, len(started)):
            tokens = 10 * (j - i + 1)
            assert tokens <= 100 * (started[j] - started[i]) + 50 + 10 + 10, (i, j, started[j] - started[i])
    assert started[-1] - started[0] > 1.2  # (200 − 60) tokens at 100 a second


async def test_tokens_a_call_did_not_use_come_back_to_every_worker():
    key = secrets.token_hex(4)
    first, second = (SharedLimits(REDIS_URL, "openai", "m", key, token_burst_s=0.0) for _ in range(2))
    await first.take_tokens(600, 50)  # 10 a second: 5 s promised
    await first.settle_tokens(600, -48)  # it used 2
    start = time.monotonic()
    await second.take_tokens(600, 1)
    assert time.monotonic() - start < 0.5, "the other worker did not wait out tokens given back"
    await first.aclose()
    await second.aclose()


async def test_rate_limit_headers_heard_by_one_worker_hold_back_every_worker():
    spent = openai_limit_headers("requests", 10, 0, "10s")
    with FakeLLMServer(api_key="not-needed", response_headers=spent) as server:
        url = f"{server.url}/v1"
        told = OpenAICompatibleChat("m", base_url=url, shared_limits_url=REDIS_URL)
        other = OpenAICompatibleChat("m", base_url=url, shared_limits_url=REDIS_URL)
        try:
            await told.complete([{"role": "user", "content": "a"}])
            await other.complete([{"role": "user", "content": "b"}])
        finally:
            await told.aclose()
            await other.aclose()
        first, second = server.state.arrivals
    assert second - first > 0.9, "one request comes back a second: the other worker waited for it"


async def test_a_shorter_pause_does_not_cut_a_longer_one_short():
    limits = SharedLimits(REDIS_URL, "openai", "m", secrets.token_hex(4))
    await limits.pause(1.5)
    await limits.pause(0.1)
    start = time.monotonic()
    await limits.wait_for_rate(None)
    assert time.monotonic() - start > 1.2
    await limits.aclose()


async def test_a_killed_workers_in_flight_slot_comes_back_when_its_hold_runs_out():
    key = secrets.token_hex(4)
    process = worker(HOLD_A_SLOT, key)
    assert process.stdout.readline().strip() == "held"
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=10)
    limits = SharedLimits(REDIS_URL, "openai", "m", key)
    start = time.monotonic()
    async with limits.slot(1):
        waited = time.monotonic() - start
    await limits.aclose()
    assert 0.3 < waited < 3.0, waited  # the dead holder's second ran out, then the slot was free


async def test_a_retry_after_told_to_one_worker_makes_every_worker_wait_it_out():
    with FakeLLMServer(api_key="not-needed") as server:
        server.fail_next(Fail(429, retry_after="1"))
        url = f"{server.url}/v1"
        told = OpenAICompatibleChat("m", base_url=url, shared_limits_url=REDIS_URL, retry=RetryPolicy(max_attempts=1))
        other = OpenAICompatibleChat("m", base_url=url, shared_limits_url=REDIS_URL)
        try:
            with pytest.raises(Exception, match="429|rate"):
                await told.complete([{"role": "user", "content": "a"}])
            start = time.monotonic()
            await other.complete([{"role": "user", "content": "b"}])
            assert time.monotonic() - start > 0.8, "the other worker waited out the provider's Retry-After"
        finally:
            await told.aclose()
            await other.aclose()


async def test_an_in_process_model_keeps_its_limits_to_its_process():
    from evalhub.llm.providers.heuristic import HeuristicJudge

    assert HeuristicJudge(shared_limits_url=REDIS_URL).shared_limits is None


async def test_a_live_call_longer_than_its_hold_keeps_its_slot():
    key = secrets.token_hex(4)
    first, second = (SharedLimits(REDIS_URL, "openai", "m", key, hold_s=0.6) for _ in range(2))
    released_at = 0.0

    async def long_call():
        nonlocal released_at
        async with first.slot(1):
            await asyncio.sleep(1.5)  # twice its hold: renewed meanwhile, not taken
            released_at = time.monotonic()

    holder = asyncio.create_task(long_call())
    await asyncio.sleep(0.1)
    async with second.slot(1):
        got_at = time.monotonic()
    await holder
    assert got_at >= released_at, "the second call got the slot only after the first gave it back"
    await first.aclose()
    await second.aclose()


async def test_while_redis_does_not_answer_calls_go_on_under_local_limits_and_share_again_once_it_does(
    caplog, monkeypatch, tmp_path
):
    from evalhub.llm import shared_limits
    from evalhub.llm.testing import closed_port

    monkeypatch.setattr(shared_limits, "RETRY_REDIS_S", 0.2)
    port = closed_port()
    url = f"redis://127.0.0.1:{port}/0"
    with FakeLLMServer(api_key="not-needed") as server:
        client = OpenAICompatibleChat(
            "m", base_url=f"{server.url}/v1", shared_limits_url=url, requests_per_minute=600, tokens_per_minute=60000
        )
        try:
            start = time.monotonic()
            for n in range(3):  # a call every 0.1 s, held by this process alone
                assert (await client.complete([{"role": "user", "content": f"down {n}"}])).text == "ok"
            assert time.monotonic() - start > 0.18
            assert "Redis did not answer" in caplog.text

            redis = subprocess.Popen(
                ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                cwd=tmp_path,
                stdout=subprocess.DEVNULL,
            )
            try:
                for _ in range(100):
                    if (
                        subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).stdout.strip()
                        == b"PONG"
                    ):
                        break
                    time.sleep(0.05)
                await asyncio.sleep(0.3)
                await client.complete([{"role": "user", "content": "up"}])
                assert "Redis answers again" in caplog.text
                keys = subprocess.run(["redis-cli", "-p", str(port), "keys", "evalhub:limits:*"], capture_output=True)
                assert b":next" in keys.stdout and b":tokens" in keys.stdout, "the limits are kept in Redis again"
            finally:
                redis.terminate()
                redis.wait(timeout=10)
        finally:
            await client.aclose()


async def test_a_pause_kept_locally_while_redis_did_not_answer_still_holds_once_it_answers():
    limits = SharedLimits(REDIS_URL, "openai", "m", secrets.token_hex(4))
    await limits.local.pause(1.0)  # what pause() keeps when Redis does not answer
    start = time.monotonic()
    await limits.wait_for_rate(None)
    assert time.monotonic() - start > 0.8
    await limits.aclose()


def test_every_limit_of_a_process_shares_one_bounded_pool_whatever_the_threads_and_loops():
    """Each client's limits had a pool of its own per event loop, with no bound: one worker's
    debates (a loop per thread) held a connection per call in flight."""
    import threading

    import redis

    from evalhub.llm import shared_limits

    name = f"evalhub-limits-{secrets.token_hex(4)}"
    url = f"{REDIS_URL}?client_name={name}"
    held: list[int] = []

    async def one_threads_calls(thread: int) -> None:
        limits = [SharedLimits(url, "openai", f"model-{thread}-{i}") for i in range(3)]
        await asyncio.gather(*(limits[i % 3].wait_for_rate(600_000) for i in range(100)))
        clients = redis.Redis.from_url(REDIS_URL).client_list()
        held.append(sum(client.get("name") == name for client in clients))

    threads = [threading.Thread(target=asyncio.run, args=(one_threads_calls(t),)) for t in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(held) == 4
    assert 1 <= max(held) <= shared_limits.MAX_CONNECTIONS


async def test_calls_waiting_for_a_slot_in_one_client_do_not_each_ask_redis():
    """A DHP chunk queues hundreds of calls behind a client's 8 slots. Each asked Redis for a slot every
    50 ms, which filled the process's connections to Redis: checks waited past the pool's bound and
    were read as "Redis did not answer", and the limits stopped being shared (the deployment load test).
    Now only the calls that hold one of the client's own slots ask Redis."""
    limits = SharedLimits(REDIS_URL, "openai", "m", secrets.token_hex(8))
    takes = []
    ask = limits._eval

    async def counted(script, *keys_then_args, **keys):
        if script is shared_limits._TAKE:  # ("inflight", "pause", limit, holder, hold)
            takes.append(keys_then_args[3])
        return await ask(script, *keys_then_args, **keys)

    limits._eval = counted  # type: ignore[method-assign]
    inside, release = asyncio.Semaphore(0), asyncio.Event()

    async def call() -> None:
        async with limits.slot(2):
            inside.release()
            await release.wait()

    calls = [asyncio.ensure_future(call()) for _ in range(50)]
    await inside.acquire()
    await inside.acquire()  # two calls hold the two slots; 48 wait
    await asyncio.sleep(0.3)  # time for waiting calls to ask (before: each at once, then every 50 ms)
    assert len(takes) == 2, f"{len(takes)} asks for a slot while two calls held both"
    release.set()
    await asyncio.wait_for(asyncio.gather(*calls), 30)
    assert len(set(takes)) == 50, "every call held a slot in Redis, once each"


async def test_a_call_asks_redis_once_for_its_place_and_once_to_give_it_back():
    """A worker streaming a hundred debates asks the shared limits before and after every call: the
    pause was read in a round trip of its own after the slot's (8 % of a worker's CPU in the
    compose-shape profile of issue 79); the slot's take now reads it. A pause set meanwhile still
    holds every call (the Retry-After test above)."""
    with FakeLLMServer(api_key="not-needed") as server:
        client = OpenAICompatibleChat("m", base_url=f"{server.url}/v1", shared_limits_url=REDIS_URL)
        asked: list[str] = []

        class Recorded:  # the process's Redis client, each command named as it is sent
            def __getattr__(self, command):
                asked.append(command)
                return getattr(shared_limits._redis_for(REDIS_URL), command)

        async def on_redis(command):
            return await command(Recorded())

        client.limits._on_redis = on_redis  # type: ignore[method-assign]
        try:
            await client.complete([{"role": "user", "content": "a"}])
            assert asked == ["eval", "zrem"], asked
            await client.limits.pause(0.6)  # another worker was told to wait
            asked.clear()
            start = time.monotonic()
            await client.complete([{"role": "user", "content": "b"}])
            assert time.monotonic() - start > 0.4, "the call waited out the shared pause"
        finally:
            await client.aclose()
