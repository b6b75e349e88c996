"""Turning an HTTP provider's failure into a retry decision (shared by the SDK clients)."""

from __future__ import annotations

import errno
import re
from collections.abc import Iterator

import aiohttp
import httpx
import httpx2

from evalhub.llm.base import Failure
from evalhub.llm.retry import parse_retry_after
from evalhub.llm.types import AuthenticationFailed, RequestRejected

RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}


def classify_status(status: int, retry_after: str | None, message: str, key_variable: str) -> Failure:
    if status in (401, 403):
        return Failure(
            retry=False,
            cause=f"the API key was rejected (HTTP {status}); check {key_variable}",
            error=AuthenticationFailed,
        )
    if status in RETRYABLE_STATUS:
        reason = "rate limited" if status == 429 else "server error" if status >= 500 else "temporary error"
        return Failure(retry=True, cause=f"{reason} (HTTP {status})", retry_after_s=parse_retry_after(retry_after))
    return Failure(retry=False, cause=f"request rejected (HTTP {status}): {message[:300]}", error=RequestRejected)


def classify_transport(error: Exception) -> Failure | None:
    """A connection that failed under a response already streaming: the SDKs pass their HTTP
    client's error through unwrapped. Retried like any connection failure (while no text has
    reached the caller)."""
    if isinstance(error, (httpx2.TransportError, aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError)):
        return Failure(retry=True, cause=f"connection failed mid-stream ({type(error).__name__}: {str(error)[:200]})")
    return None


def _causes(error: BaseException) -> Iterator[BaseException]:
    """The error and what it was raised from or during, once each."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


CLOSED = (
    aiohttp.ServerDisconnectedError,
    aiohttp.ClientPayloadError,  # a body cut short
    httpx2.RemoteProtocolError,
    httpx.RemoteProtocolError,
    ConnectionResetError,
    BrokenPipeError,
)


def closed_connection(error: Exception) -> Failure | None:
    """A server that closed the connection before answering: said so, and asked again. The SDKs
    report it as a connection error, and OpenAI's aiohttp-backed client as a timeout ("timed out after
    20 s" 0.3 s after the call began)."""
    if any(isinstance(cause, CLOSED) for cause in _causes(error)):
        return Failure(retry=True, cause="the server closed the connection before its answer ended")
    return None


def connection_failure(error: Exception) -> Failure | None:
    """A connection refused or closed under the call, said as what it was (both SDKs, both HTTP clients)."""
    return refused_connection(error) or closed_connection(error)


def refused_connection(error: Exception) -> Failure | None:
    """A connection the server's machine refused (nothing listens on that port): said at once, with
    the address, and not retried. The SDKs report it as a generic connection error, and the
    aiohttp-backed client even as a timeout, which sent people looking at timeouts for a server
    that was simply not running."""
    for current in _causes(error):
        if isinstance(current, ConnectionRefusedError) or getattr(current, "errno", None) == errno.ECONNREFUSED:
            return Failure(retry=False, cause=f"connection refused by {_address(error, current)}")
    return None


_CONNECT_CALL = re.compile(r"\('([^']+)', (\d+)\)")


def _address(error: BaseException, refused: BaseException) -> str:
    url = getattr(getattr(error, "request", None), "url", None)
    if url is not None and getattr(url, "host", None):
        port = url.port or {"https": 443, "http": 80}.get(url.scheme, "")
        return f"{url.host}:{port}"
    found = _CONNECT_CALL.search(str(refused))
    return f"{found.group(1)}:{found.group(2)}" if found else "the server (no address given)"
