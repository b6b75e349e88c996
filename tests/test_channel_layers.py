"""The embedded mode's in-memory channel layer, sent to from a worker thread's own event loop."""

from __future__ import annotations

import asyncio

from evalhub.channel_layers import ThreadSafeInMemoryChannelLayer


async def test_a_worker_threads_send_reaches_a_watched_group_and_an_unwatched_group_is_not_handed_over(monkeypatch):
    layer = ThreadSafeInMemoryChannelLayer()
    channel = await layer.new_channel()
    await layer.group_add("debate.1", channel)
    receiving = asyncio.ensure_future(layer.receive(channel))  # the consumers' loop: the layer's home
    await asyncio.sleep(0)
    handed_over = []
    real = asyncio.run_coroutine_threadsafe
    monkeypatch.setattr(
        asyncio, "run_coroutine_threadsafe", lambda coro, loop: handed_over.append(1) or real(coro, loop)
    )

    async def worker_sends() -> None:
        await layer.group_send("debate.2", {"type": "html.fragment", "html": "nobody watches"})
        await layer.group_send("debate.1", {"type": "html.fragment", "html": "watched"})

    await asyncio.to_thread(asyncio.run, worker_sends())
    message = await asyncio.wait_for(receiving, timeout=5)
    assert message["html"] == "watched"
    assert handed_over == [1], "only the watched group's message crossed to the consumers' loop"
