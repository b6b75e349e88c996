"""The loop that batches of calls run on: uvloop where installed, asyncio's own otherwise."""

from __future__ import annotations

import asyncio

import uvloop

from evalhub.llm import event_loop


async def loop_type() -> type:
    await asyncio.sleep(0)
    return type(asyncio.get_running_loop())


def test_a_batch_runs_on_uvloop_when_it_is_installed():
    assert event_loop.run(loop_type()) is uvloop.Loop


def test_without_uvloop_the_standard_loop_runs_the_same_coroutine(monkeypatch):
    monkeypatch.setattr(event_loop, "uvloop", None)
    assert issubclass(event_loop.run(loop_type()), asyncio.BaseEventLoop)
    assert not issubclass(event_loop.run(loop_type()), uvloop.Loop)
