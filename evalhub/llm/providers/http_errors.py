"""Turning an HTTP provider's failure into a retry decision (shared by the SDK clients)."""

from __future__ import annotations

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
    if isinstance(error, httpx2.TransportError):
        return Failure(retry=True, cause=f"connection failed mid-stream ({type(error).__name__}: {str(error)[:200]})")
    return None
