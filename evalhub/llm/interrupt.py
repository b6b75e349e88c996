"""Stopping a batch of calls between calls: a job paused or cancelled, or a chunk taken over.

A runner sets a stop check for the calls it makes (`stopping_when`); every chat client and
scorer calls `check()` before each call and each retry, which raises `Interrupted` once the
check says so. The check itself is cheap (it reads a value another thread keeps up to date),
so it costs nothing on the hot path. Calls already in flight finish; no new one starts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

StopCheck = Callable[[], str]  # "" to go on, else the reason ("pause", "cancel", "lost")

_current: ContextVar[StopCheck | None] = ContextVar("evalhub_stop_check", default=None)


class Interrupted(Exception):
    """Raised between calls when the work was asked to stop; not a provider failure."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(f"stopped between calls ({reason})")


def check() -> None:
    stop = _current.get()
    if stop is not None and (reason := stop()):
        raise Interrupted(reason)


@contextmanager
def stopping_when(stop: StopCheck) -> Iterator[None]:
    """Within the block (and the asyncio tasks it starts), calls stop once `stop()` gives a reason."""
    token = _current.set(stop)
    try:
        yield
    finally:
        _current.reset(token)
