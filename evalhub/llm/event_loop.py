"""The event loop that batches of LLM calls run on.

uvloop where it is installed (not on Windows): a worker with hundreds of streamed calls in
flight spends much of its CPU in the loop and its socket transports, which uvloop runs in C.
The standard loop otherwise, with the same behaviour.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

try:
    import uvloop
except ImportError:  # pragma: no cover - Windows, or a minimal install
    uvloop = None  # type: ignore[assignment]  # optional: the standard loop serves instead

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """asyncio.run() on the fastest loop available."""
    with asyncio.Runner(loop_factory=uvloop.new_event_loop if uvloop else None) as runner:
        return runner.run(coroutine)
