"""Fragments for browsers: rendered only when someone may be watching, sent once the write commits."""

from __future__ import annotations

import pytest
from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer

from evalhub import live
from evalhub.channel_layers import ThreadSafeInMemoryChannelLayer


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
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        live.broadcast_html("debate.1", recording(rendered, "watched"))
        live.broadcast_html("debate.2", recording(rendered, "unwatched"))
        live.broadcast_html("debate.2", "<p>already rendered</p>")  # a string is sent as it is
        assert rendered == ["watched"], "rendered inside the transaction, for the watched group only"
    assert len(callbacks) == 2
    assert async_to_sync(layer.receive)(channel)["html"] == "<p>watched</p>"


@pytest.mark.django_db
def test_a_layer_that_cannot_tell_who_watches_gets_every_fragment(monkeypatch, django_capture_on_commit_callbacks):
    layer = InMemoryChannelLayer()  # like Redis: no has_members
    monkeypatch.setattr(live, "_layer", lambda: layer)
    rendered: list[str] = []
    with django_capture_on_commit_callbacks(execute=True):
        live.broadcast_html("debate.2", recording(rendered, "maybe watched"))
    assert rendered == ["maybe watched"]
