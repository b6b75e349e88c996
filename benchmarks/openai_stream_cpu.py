"""CPU per streamed OpenAI call: evalhub's client through the official SDK (now) against the hand client it
replaced (the same JSON straight over aiohttp, no SDK: kept here as the "before" side), with the SDK's
bare typed stream, its streaming response and its low-level `post` beside them, side by side in one run.

The fake server runs in a process of its own (`python -m evalhub.llm.testing`), so the CPU
measured is the client's alone: the SDK, its HTTP client and the parsing of the stream. The two
evalhub sides include its retries, cache key, meter and concurrency gate.

The five run interleaved (A B C D E A B C D E …, `--repeats` rounds), CPU per call with min / median / max.
Nothing is bounded: the SDK is the transport whatever it costs (provider latency and rate limits, not
a millisecond of client CPU, bound an evaluation); the figure says what it costs.

    python benchmarks/openai_stream_cpu.py                  # aiohttp under the SDK (the default)
    python benchmarks/openai_stream_cpu.py --http-client httpx --calls 300 --words 400
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# A debate turn's prompt: a system message and the question with both answers and earlier turns.
MESSAGES = [
    {"role": "system", "content": "You are a careful judge of answers. " * 20},
    {"role": "user", "content": "Question, two submissions and the other speakers' evaluations. " * 60},
]


def streamed_request(model: str) -> dict:
    return {
        "model": model,
        "messages": MESSAGES,
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 1024,
    }


def text_of(event: dict, parts: list[str]) -> None:
    for choice in event.get("choices") or ():
        if text := (choice.get("delta") or {}).get("content"):
            parts.append(text)


async def typed_stream(client, model: str) -> str:
    stream = await client.chat.completions.create(**streamed_request(model))
    parts = []
    async for chunk in stream:
        for choice in chunk.choices:
            if choice.delta.content:
                parts.append(choice.delta.content)
    return "".join(parts)


async def streaming_response(client, model: str) -> str:
    parts = []
    async with client.chat.completions.with_streaming_response.create(**streamed_request(model)) as response:
        async for line in response.iter_lines():
            if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                continue
            text_of(json.loads(line[5:]), parts)
    return "".join(parts)


async def low_level_post(client, model: str) -> str:
    """The SDK's documented low-level `post` with its server-sent-event stream, each event as plain JSON:
    no typed parameters walked (0.3-0.5 ms a call for one or two messages), no typed chunks made. Tried as
    evalhub's transport on 2026-12-06 and not taken: the SDK's own event decoding costs about what the
    walk saves (2.03 -> 1.94 ms a call at 20 words, within the rounds' spread)."""
    import openai

    parts = []
    stream = await client.post(
        "/chat/completions",
        body=streamed_request(model),
        cast_to=object,
        stream=True,
        stream_cls=openai.AsyncStream[object],
    )
    async with stream:
        async for event in stream:
            text_of(event, parts)
    return "".join(parts)


class HandClient:
    """evalhub's OpenAI-style streamed call before the SDK became its transport: the request as JSON
    straight over aiohttp, the server-sent events split by hand (the "before" side; its retries,
    limits and cache are the same ChatClient machinery as the SDK side's)."""

    def __new__(cls, model: str, base_url: str, concurrency: int):
        import aiohttp

        from evalhub.llm.base import ChatClient, Sampling
        from evalhub.llm.types import Completion

        class Hand(ChatClient):
            provider = "openai-compatible"

            def __init__(self) -> None:
                super().__init__(model, endpoint=base_url, max_concurrency=concurrency)
                self._session: aiohttp.ClientSession | None = None

            async def _stream_once(self, messages, sampling: Sampling, emit) -> Completion:
                if self._session is None:
                    self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
                request = {
                    "model": self.model,
                    "messages": messages,
                    "temperature": sampling.temperature,
                    "max_tokens": sampling.max_tokens,
                    "stream": True,
                    "stream_options": {"include_usage": True},
                }
                headers = {"Authorization": "Bearer not-needed", "Content-Type": "application/json"}
                parts, rest, usage = [], b"", {}
                url = f"{base_url}/chat/completions"
                async with self._session.post(url, data=json.dumps(request), headers=headers) as response:
                    async for block in response.content.iter_any():
                        lines = (rest + block).split(b"\n")
                        rest = lines.pop()
                        for line in lines:
                            if not line.startswith(b"data:") or line[5:].strip() == b"[DONE]":
                                continue
                            event = json.loads(line[5:])
                            usage = event.get("usage") or usage
                            for choice in event.get("choices") or ():
                                if text := (choice.get("delta") or {}).get("content"):
                                    parts.append(text)
                                    emit(text)
                return Completion("".join(parts), self.provider, self.model, usage.get("prompt_tokens", 0))

            async def aclose(self) -> None:
                if self._session is not None:
                    await self._session.close()
                await super().aclose()

        return Hand()


async def measure(name: str, call, calls: int, concurrency: int) -> float:
    """CPU seconds per call of `calls` calls, `concurrency` at a time (after a warm-up)."""
    await asyncio.gather(*(call() for _ in range(concurrency)))
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            await call()

    start = time.process_time()
    await asyncio.gather(*(one() for _ in range(calls)))
    return (time.process_time() - start) / calls


async def run(url: str, args: argparse.Namespace) -> None:
    import openai

    from evalhub.llm.providers.openai_chat import OpenAICompatibleChat
    from evalhub.llm.providers.transport import async_http_client

    async def ignore(headers: object) -> None:
        return None

    sdk = openai.AsyncOpenAI(
        api_key="not-needed", base_url=f"{url}/v1", max_retries=0, http_client=async_http_client(openai, 60.0, ignore)
    )
    # Its own server's key, never the user's OPENAI_COMPATIBLE_API_KEY (which the server would refuse).
    adapter = OpenAICompatibleChat(
        "judge-0", base_url=f"{url}/v1", api_key="not-needed", max_concurrency=args.concurrency
    )
    hand = HandClient("judge-0", f"{url}/v1", args.concurrency)

    def streamed(client):
        async def call() -> str:
            stream = client.stream(MESSAGES, max_tokens=1024)
            return "".join([chunk async for chunk in stream])

        return call

    variants = {
        "SDK typed stream (bare)": lambda: typed_stream(sdk, "judge-0"),
        "SDK streaming response (bare)": lambda: streaming_response(sdk, "judge-0"),
        "SDK low-level post (bare)": lambda: low_level_post(sdk, "judge-0"),
        "evalhub hand client (before)": streamed(hand),
        "evalhub through the SDK (now)": streamed(adapter),
    }
    results: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.repeats):  # interleaved: a slow minute on a shared machine hits every variant
        for name, call in variants.items():
            results[name].append(await measure(name, call, args.calls, args.concurrency))
    await sdk.close()
    await adapter.aclose()
    await hand.aclose()
    medians = {name: statistics.median(values) for name, values in results.items()}
    before = medians["evalhub hand client (before)"]
    print(
        f"{args.calls} streamed calls of {args.words} words each, {args.concurrency} at a time, {args.repeats} "
        f"interleaved rounds, HTTP client under the SDK {os.environ.get('EVALHUB_HTTP_CLIENT', 'aiohttp')}; "
        "client CPU per call, min / median / max, and the median against the hand client's:"
    )
    for name, values in results.items():
        spread = " / ".join(f"{v * 1000:.2f}" for v in (min(values), medians[name], max(values)))
        print(f"  {name:<34}{spread:>24} ms   {medians[name] / before:>5.2f}×")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--words", type=int, default=200, help="words per answer: one chunk each")
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--http-client", choices=["aiohttp", "httpx"], default="aiohttp")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds of the five variants")
    args = parser.parse_args()
    os.environ["EVALHUB_HTTP_CLIENT"] = args.http_client
    server = subprocess.Popen(
        [sys.executable, "-m", "evalhub.llm.testing", "--latency", "0", "--words", str(args.words), "--keep-alive"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = server.stdout.readline().strip()
        asyncio.run(run(url, args))
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
