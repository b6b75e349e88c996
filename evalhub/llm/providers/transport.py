"""The HTTP client under a provider SDK (OpenAI's and Anthropic's).

The SDKs ship an aiohttp-backed client (their `aiohttp` extra) beside their default httpx
one, with the same interface. It is used where installed: a worker with hundreds of streamed
calls in flight spent most of its CPU in the default client's pure-Python connection pool,
HTTP parser and per-read cancel scopes; aiohttp parses in C on asyncio's own streams
(benchmarks/openai_stream_cpu.py --http-client compares the two under the OpenAI SDK).
"""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable, Mapping
from types import ModuleType
from typing import Any

from evalhub.config import Env
from evalhub.llm.types import RequestRejected

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


def headers_named_by(variable: str | None, provider: str, model: str) -> dict[str, str]:
    """The extra headers a spec names with `headers_env=VARIABLE`: that environment variable holds a JSON
    object of header names to values (a gateway's attribution or its own auth header). A spec names the
    variable and never carries the values, which may be secrets; a refusal never repeats them."""
    if not variable:
        return {}
    text = os.environ.get(variable)
    if text is None:
        raise RequestRejected(provider, model, f"headers_env names {variable}, which is not set")
    try:
        headers = json.loads(text)
    except ValueError:
        headers = None
    if not isinstance(headers, dict) or not all(
        isinstance(name, str) and name.strip() and isinstance(value, str) for name, value in headers.items()
    ):
        raise RequestRejected(provider, model, f"{variable} must hold a JSON object of header names to text values")
    return headers
