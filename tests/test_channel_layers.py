"""The channel layers: the embedded mode's in memory, sent to from a worker thread's own event loop,
and production's on Redis, with a bounded pool per event loop."""

from __future__ import annotations

import asyncio

import pytest
from channels.layers import InMemoryChannelLayer

from evalhub.channel_layers import ThreadSafeInMemoryChannelLayer
from tests.conftest import REDIS_URL, requires_redis


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


@requires_redis
@pytest.mark.redis
async def test_worker_threads_sending_to_many_groups_at_once_hold_no_more_redis_connections_than_the_bound():
    """200 debates streaming on one worker's loop held over a thousand connections, and a bound per
    loop multiplied with the worker's threads; now the process's sends share one bounded pool."""
    import threading
    import uuid

    import redis

    from evalhub.channel_layers import WatchedRedisChannelLayer

    name = f"evalhub-bound-{uuid.uuid4().hex[:8]}"
    host = {"address": REDIS_URL, "client_name": name, "max_connections": 4, "pool_timeout": 10}
    layer = WatchedRedisChannelLayer(hosts=[host])

    def named() -> int:
        return sum(client.get("name") == name for client in redis.Redis.from_url(REDIS_URL).client_list())

    try:
        channels = [await layer.new_channel() for _ in range(5)]
        for i, channel in enumerate(channels):
            await layer.group_add(f"bound-{i}", channel)
        receiving = named()  # this loop's own, for adding to groups and receiving

        async def one_thread_sends(thread: int) -> None:
            await asyncio.gather(
                *(layer.group_send(f"bound-{i % 5}", {"type": "html.fragment", "html": f"{thread}"}) for i in range(50))
            )

        threads = [threading.Thread(target=asyncio.run, args=(one_thread_sends(t),)) for t in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert 1 <= named() - receiving <= 4
        assert (await layer.receive(channels[0]))["type"] == "html.fragment", "every send went through"
    finally:
        await layer.flush()


async def test_the_embedded_layer_sweeps_for_expired_messages_once_a_second_not_on_every_message(monkeypatch):
    sweeps = []
    real = InMemoryChannelLayer._clean_expired
    monkeypatch.setattr(InMemoryChannelLayer, "_clean_expired", lambda layer: sweeps.append(1) or real(layer))
    layer = ThreadSafeInMemoryChannelLayer(expiry=0.05)
    channel = await layer.new_channel()
    await layer.group_add("debate.1", channel)
    for n in range(50):  # a streamed answer's chunks: a group send and a receive each
        await layer.group_send("debate.1", {"type": "html.fragment", "html": f"w{n}"})
        assert (await layer.receive(channel))["html"] == f"w{n}"
    assert len(sweeps) == 1

    # An expired message is still dropped, at the next sweep.
    await layer.send(channel, {"type": "html.fragment", "html": "stale"})
    await asyncio.sleep(0.1)
    monkeypatch.setattr(layer, "SWEEP_EVERY_S", 0.0)
    await layer.send(channel, {"type": "html.fragment", "html": "fresh"})
    assert (await layer.receive(channel))["html"] == "fresh"
    assert len(sweeps) > 1


@requires_redis
@pytest.mark.redis
async def test_a_receive_whose_cancel_a_redis_write_swallowed_still_ends(monkeypatch):
    """A closed socket's receive is cancelled; Python 3.11's asyncio.wait_for (around each redis-py
    write) can swallow that cancel when it lands as the write finishes (CPython gh-86296). The
    receive then popped on for ever and uvicorn never exited on SIGTERM. Here the swallow is made
    on purpose, the way wait_for does it: cancel requested, CancelledError caught, the write returns."""
    import uuid

    from django.conf import settings
    from redis.asyncio.connection import AbstractConnection

    from evalhub.channel_layers import WatchedRedisChannelLayer

    shipped = settings.CHANNEL_LAYERS["default"]["CONFIG"]["hosts"][0]  # its socket timeout outlasts a pop
    layer = WatchedRedisChannelLayer(hosts=[{**shipped, "address": REDIS_URL, "max_connections": 4}])
    channel = await layer.new_channel()
    receiving: asyncio.Task | None = None
    swallow = {"armed": False}
    write = AbstractConnection.send_packed_command

    async def write_that_swallows_a_cancel(connection, command, check_health=True):
        await write(connection, command, check_health)
        if swallow["armed"] and asyncio.current_task() is receiving:
            swallow["armed"] = False
            receiving.cancel()
            try:
                await asyncio.sleep(0)
            except asyncio.CancelledError:
                pass  # what wait_for does when its inner write is already done

    monkeypatch.setattr(AbstractConnection, "send_packed_command", write_that_swallows_a_cancel)
    try:
        receiving = asyncio.ensure_future(layer.receive(channel))
        swallow["armed"] = True
        done, _ = await asyncio.wait({receiving}, timeout=20)  # ends at once; before, it never did
        assert receiving in done and receiving.cancelled()

        # The layer goes on: a later receive on the same channel gets what is sent to it.
        await layer.send(channel, {"type": "html.fragment", "html": f"after {uuid.uuid4().hex}"})
        assert (await asyncio.wait_for(layer.receive(channel), 10))["html"].startswith("after ")
    finally:
        if receiving is not None and not receiving.done():
            receiving.cancel()
            await asyncio.wait({receiving}, timeout=10)
        await layer.flush()


@requires_redis
@pytest.mark.redis
async def test_streamed_frames_for_a_group_nobody_watches_stay_off_redis_and_a_joining_socket_gets_the_next(
    monkeypatch,
):
    """A worker streaming a thousand debates, nearly all unwatched, sent every frame through Redis and ran
    the send pool dry; now a group's membership is asked once while it is kept."""
    import uuid

    import redis.asyncio as aioredis
    from channels_redis.core import RedisChannelLayer

    from evalhub import live
    from evalhub.channel_layers import WatchedRedisChannelLayer

    layer = WatchedRedisChannelLayer(hosts=[{"address": REDIS_URL, "max_connections": 4, "pool_timeout": 10}])
    monkeypatch.setattr(live, "_layer", lambda: layer)
    through_redis, asked = [], []
    real_send, real_zcard = RedisChannelLayer.group_send, aioredis.Redis.zcard
    monkeypatch.setattr(
        RedisChannelLayer, "group_send", lambda self, g, m: through_redis.append(g) or real_send(self, g, m)
    )
    monkeypatch.setattr(aioredis.Redis, "zcard", lambda self, key: asked.append(key) or real_zcard(self, key))
    group = f"debate.{uuid.uuid4().hex[:8]}"
    try:
        layer.MEMBERSHIP_KEPT_S = 3600  # held: the test, not the clock, says when it is asked again
        for word in range(50):
            await live.send_html(group, f"<p>{word} words so far</p>")
        assert through_redis == []
        assert len(asked) == 1, "the group's membership is asked once while the answer is kept"
        channel = await layer.new_channel()
        await layer.group_add(group, channel)
        layer.MEMBERSHIP_KEPT_S = 0  # the kept answer has run out: the next frame asks, and goes out
        await live.send_html(group, "<p>51 words so far</p>")
        assert through_redis == [group]
        assert (await asyncio.wait_for(layer.receive(channel), timeout=10))["html"] == "<p>51 words so far</p>"
    finally:
        await layer.flush()
