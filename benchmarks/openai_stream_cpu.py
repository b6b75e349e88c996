"""CPU per streamed OpenAI call, three ways through the same SDK, side by side in one run.

The fake server runs in a process of its own (`python -m evalhub.llm.testing`), so the CPU
measured is the client's alone: the SDK, its HTTP client and the parsing of the stream.

- typed stream: `chat.completions.create(stream=True)`, the SDK's documented stream: the body is
  transformed by its typing-driven serializer and each chunk becomes a `ChatCompletionChunk`;
- streaming response: `chat.completions.with_streaming_response.create(...)`, the documented raw
  surface: the same request transform, then the server-sent events parsed by hand;
- evalhub: `OpenAIChat.stream`, the adapter: the same JSON straight over aiohttp (no SDK), with its
  retries, cache key, meter and concurrency gate included.

The three run interleaved (A B C A B C …, `--repeats` rounds), CPU per call with min / median / max;
the script exits 1 when the adapter's median is not below the SDK's streaming response's.

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


async def typed_stream(client, model: str) -> str:
    stream = await client.chat.completions.create(
        model=model, messages=MESSAGES, stream=True, stream_options={"include_usage": True}, max_tokens=1024
    )
    parts = []
    async for chunk in stream:
        for choice in chunk.choices:
            if choice.delta.content:
                parts.append(choice.delta.content)
    return "".join(parts)


async def streaming_response(client, model: str) -> str:
    parts = []
    request = {
        "model": model,
        "messages": MESSAGES,
        "stream": True,
        "stream_options": {"include_usage": True},
        "max_tokens": 1024,
    }
    async with client.chat.completions.with_streaming_response.create(**request) as response:
        async for line in response.iter_lines():
            if not line.startswith("data:") or line[5:].strip() == "[DONE]":
                continue
            for choice in json.loads(line[5:]).get("choices") or ():
                text = (choice.get("delta") or {}).get("content")
                if text:
                    parts.append(text)
    return "".join(parts)


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


async def run(url: str, args: argparse.Namespace) -> bool:
    import openai

    from evalhub.llm.providers.openai_chat import OpenAICompatibleChat
    from evalhub.llm.providers.transport import async_http_client

    async def ignore(headers: object) -> None:
        return None

    sdk = openai.AsyncOpenAI(
        api_key="not-needed", base_url=f"{url}/v1", max_retries=0, http_client=async_http_client(openai, 60.0, ignore)
    )
    adapter = OpenAICompatibleChat("judge-0", base_url=f"{url}/v1", max_concurrency=args.concurrency)

    async def evalhub_call() -> str:
        stream = adapter.stream(MESSAGES, max_tokens=1024)
        return "".join([chunk async for chunk in stream])

    variants = {
        "typed stream (create, stream=True)": lambda: typed_stream(sdk, "judge-0"),
        "streaming response (public raw)": lambda: streaming_response(sdk, "judge-0"),
        "evalhub adapter (aiohttp, no SDK)": evalhub_call,
    }
    results: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.repeats):  # interleaved: a slow minute on a shared machine hits every variant
        for name, call in variants.items():
            results[name].append(await measure(name, call, args.calls, args.concurrency))
    await sdk.close()
    await adapter.aclose()
    medians = {name: statistics.median(values) for name, values in results.items()}
    fastest = min(medians.values())
    print(
        f"{args.calls} streamed calls of {args.words} words each, {args.concurrency} at a time, {args.repeats} "
        f"interleaved rounds, HTTP client under the SDK {os.environ.get('EVALHUB_HTTP_CLIENT', 'aiohttp')}; "
        "client CPU per call, min / median / max:"
    )
    for name, values in results.items():
        spread = " / ".join(f"{v * 1000:.2f}" for v in (min(values), medians[name], max(values)))
        print(f"  {name:<38}{spread:>22} ms   {medians[name] / fastest:>5.2f}×")
    ours, sdk_raw = medians["evalhub adapter (aiohttp, no SDK)"], medians["streaming response (public raw)"]
    met = ours < sdk_raw
    print(f"bound: the adapter below the SDK's streaming response: {'met' if met else 'MISSED'}")
    return met


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--words", type=int, default=200, help="words per answer: one chunk each")
    parser.add_argument("--concurrency", type=int, default=20)
    parser.add_argument("--http-client", choices=["aiohttp", "httpx"], default="aiohttp")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds of the three variants")
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
        met = asyncio.run(run(url, args))
    finally:
        server.terminate()
        server.wait(timeout=10)
    if not met:
        sys.exit(1)


if __name__ == "__main__":
    main()
