"""The HTTP client under a provider SDK (OpenAI's and Anthropic's).

The SDKs ship an aiohttp-backed client (their `aiohttp` extra) beside their default httpx
one, with the same interface. It is used where installed: a worker with hundreds of streamed
calls in flight spent most of its CPU in the default client's pure-Python connection pool,
HTTP parser and per-read cancel scopes; aiohttp parses in C on asyncio's own streams
(benchmarks/openai_stream_cpu.py --http-client compares the two under the OpenAI SDK).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from types import ModuleType
from typing import Any

from evalhub.config import Env

HTTP_CLIENT_VARIABLE = "EVALHUB_HTTP_CLIENT"
HTTP_CLIENTS = ("aiohttp", "httpx")


def async_http_client(
    sdk: ModuleType, timeout_s: float, on_headers: Callable[[Mapping[str, str]], Awaitable[None]]
) -> Any:
    """The SDK's aiohttp-backed client with the SDK's defaults, or its default httpx one when
    EVALHUB_HTTP_CLIENT=httpx or the SDK was installed without its extra. Either way every
    response's headers reach `on_headers` (a response hook: rate-limit headers come on every
    answer, streamed or not, failed or not)."""

    async def heard(response: Any) -> None:
        await on_headers(response.headers)

    hooks = {"response": [heard]}
    if Env().choice(HTTP_CLIENT_VARIABLE, HTTP_CLIENTS) != "httpx":
        try:
            return sdk.DefaultAioHttpClient(timeout=timeout_s, event_hooks=hooks)
        except RuntimeError:  # "... you must have installed the package with the `aiohttp` extra"
            pass
    return sdk.DefaultAsyncHttpxClient(timeout=timeout_s, event_hooks=hooks)
