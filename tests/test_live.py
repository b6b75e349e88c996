"""Fragments for browsers: rendered only when someone may be watching, sent once the write commits."""

from __future__ import annotations

import uuid

import pytest
from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer

from evalhub import live
from evalhub.channel_layers import ThreadSafeInMemoryChannelLayer
from tests.conftest import requires_redis


def recording(rendered: list[str], name: str):
    return lambda: rendered.append(name) or f"<p>{name}</p>"


@pytest.mark.django_db
def test_a_fragment_is_rendered_and_sent_only_for_a_group_that_someone_watches(
    monkeypatch, django_capture_on_commit_callbacks
):
    layer = ThreadSafeInMemoryChannelLayer()
    monkeypatch.setattr(live, "_layer", lambda: layer)
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)("debate.1", channel)
    rendered: list[str] = []
    with django_capture_on_commit_callbacks(execute=True):
        live.broadcast_html("debate.1", recording(rendered, "watched"))
        live.broadcast_html("debate.2", recording(rendered, "unwatched"))
        live.broadcast_html("debate.2", "<p>already rendered</p>")  # a string is sent as it is
        assert rendered == [], "nothing is rendered before the commit"
    assert rendered == ["watched"], "rendered at the commit, for the watched group only"
    assert async_to_sync(layer.receive)(channel)["html"] == "<p>watched</p>"


@pytest.mark.django_db
def test_a_socket_that_joins_between_the_write_and_the_commit_still_gets_the_update(
    monkeypatch, django_capture_on_commit_callbacks
):
    """The socket rendered its page before this transaction's data was visible; deciding "nobody
    watches" at the write would leave that page stale until the next change."""
    layer = ThreadSafeInMemoryChannelLayer()
    monkeypatch.setattr(live, "_layer", lambda: layer)
    channel = async_to_sync(layer.new_channel)()
    with django_capture_on_commit_callbacks(execute=True):
        live.broadcast_html("job.7", lambda: "<p>stored</p>")
        async_to_sync(layer.group_add)("job.7", channel)  # the viewer arrives meanwhile
    assert async_to_sync(layer.receive)(channel)["html"] == "<p>stored</p>"


@requires_redis
def test_the_redis_layer_tells_whether_a_group_has_a_socket():
    from django.conf import settings

    from evalhub.channel_layers import WatchedRedisChannelLayer

    layer = WatchedRedisChannelLayer(**settings.CHANNEL_LAYERS["default"]["CONFIG"])
    group = f"test.{uuid.uuid4().hex}"
    assert not layer.has_members(group)
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group, channel)
    assert layer.has_members(group)
    async_to_sync(layer.group_discard)(group, channel)
    assert not layer.has_members(group)


def test_a_redis_layer_that_cannot_be_reached_counts_every_group_as_watched():
    from evalhub.channel_layers import WatchedRedisChannelLayer

    layer = WatchedRedisChannelLayer(hosts=[{"address": "redis://127.0.0.1:1/0", "socket_connect_timeout": 0.2}])
    assert layer.has_members("debate.1")


@pytest.mark.django_db
def test_a_layer_that_cannot_tell_who_watches_gets_every_fragment(monkeypatch, django_capture_on_commit_callbacks):
    layer = InMemoryChannelLayer()  # like Redis: no has_members
    monkeypatch.setattr(live, "_layer", lambda: layer)
    rendered: list[str] = []
    with django_capture_on_commit_callbacks(execute=True):
        live.broadcast_html("debate.2", recording(rendered, "maybe watched"))
    assert rendered == ["maybe watched"]


@requires_redis
@pytest.mark.redis
@pytest.mark.django_db(transaction=True)
def test_the_web_server_stops_at_once_after_twenty_viewers_came_and_went(settings):
    """uvicorn waits for every socket's task at SIGTERM; a viewer's channel-layer receive that lost
    its cancel (see test_channel_layers) kept it waiting for ever, so a deploy waited out its grace."""
    import asyncio

    from django.test import Client
    from websockets.asyncio.client import connect

    from evalhub.jobs.actions import do_create_job
    from tests.conftest import make_user, start_asgi_server

    settings.ALLOWED_HOSTS = ["127.0.0.1"]
    job = do_create_job("worker_check", "Watched job", total=3)
    client = Client()
    client.force_login(make_user("vera", "viewer"))
    url, server, thread = start_asgi_server()
    address = url.replace("http://", "ws://") + f"/ws/jobs/{job.pk}/"

    async def twenty_viewers_come_and_go() -> None:
        viewers = []
        for _ in range(20):
            viewer = await connect(
                address, origin=url, additional_headers={"Cookie": f"sessionid={client.cookies['sessionid'].value}"}
            )
            await asyncio.wait_for(viewer.recv(), 10)  # the job's current state: the socket is live
            viewers.append(viewer)
        for viewer in viewers:
            await viewer.close()

    try:
        asyncio.run(twenty_viewers_come_and_go())
    finally:
        server.should_exit = True  # what uvicorn's SIGTERM handler sets
        thread.join(30)
    assert not thread.is_alive(), "the server still waits on a closed viewer's task"
