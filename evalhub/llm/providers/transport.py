"""The HTTP client under the provider SDKs.

Both SDKs ship an aiohttp-backed client (their `aiohttp` extra) beside their default httpx
one, with the same interface. It is used where installed: a worker with hundreds of streamed
calls in flight spent most of its CPU in the default client's pure-Python connection pool,
HTTP parser and per-read cancel scopes; aiohttp parses in C on asyncio's own streams
(benchmarks/debate_throughput.py --http-client compares the two).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from evalhub.config import Env

HTTP_CLIENT_VARIABLE = "EVALHUB_HTTP_CLIENT"
HTTP_CLIENTS = ("aiohttp", "httpx")


def async_http_client(sdk: ModuleType, timeout_s: float) -> Any | None:
    """The SDK's aiohttp-backed client with the SDK's defaults, or None for the SDK's own httpx
    client: when EVALHUB_HTTP_CLIENT=httpx, or when the SDK was installed without its extra."""
    if Env().choice(HTTP_CLIENT_VARIABLE, HTTP_CLIENTS) == "httpx":
        return None
    try:
        return sdk.DefaultAioHttpClient(timeout=timeout_s)
    except RuntimeError:  # "... you must have installed the package with the `aiohttp` extra"
        return None
