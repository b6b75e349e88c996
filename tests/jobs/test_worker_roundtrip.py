"""The production path end to end: a real Celery worker on Redis, the database, channels-redis, a socket."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async as sync_to_async
from django.conf import settings

from evalhub.celery import QUEUES
from evalhub.celery import app as celery_app
from evalhub.home.embedded import worker_thread
from evalhub.jobs.actions import do_start_worker_check
from evalhub.jobs.models import JobStatus
from tests.conftest import make_user, requires_redis
from tests.jobs.helpers import open_socket

pytestmark = [requires_redis, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def broker_only():
    """Tasks go through the Redis broker (not eagerly), starting from empty queues."""
    assert settings.CELERY_BROKER_URL.startswith("redis")
    assert settings.CHANNEL_LAYERS["default"]["BACKEND"] == "evalhub.channel_layers.WatchedRedisChannelLayer"
    celery_app.conf.task_always_eager = False
    with celery_app.connection_for_write() as connection:  # stale pings from earlier runs must not answer
        for queue in QUEUES:
            connection.default_channel.queue_purge(queue)
    yield
    celery_app.conf.task_always_eager = True


async def test_a_task_run_by_a_real_worker_writes_rows_and_reaches_the_browser_socket(broker_only):
    admin = await sync_to_async(make_user)("root", "admin")
    job = await sync_to_async(do_start_worker_check)(admin)  # two ping tasks now wait in Redis
    communicator, connected = await open_socket(f"/ws/jobs/{job.pk}/", admin)
    assert connected
    assert "Queued" in await communicator.receive_from(timeout=5)
    fragments = []
    # Start the worker only now, so every update it broadcasts has a listener.
    with worker_thread(celery_app, QUEUES, pool="threads", concurrency=2):
        while not any("Every queue answered." in fragment for fragment in fragments):
            fragments.append(await communicator.receive_from(timeout=60))
    await communicator.disconnect()
    await sync_to_async(job.refresh_from_db)()
    assert job.status == JobStatus.SUCCEEDED
    heartbeats = await sync_to_async(list)(job.heartbeats.values_list("queue", "hostname"))
    assert sorted(queue for queue, _ in heartbeats) == ["default", "gpu"]
    assert all(hostname for _, hostname in heartbeats)
    # Each fragment is rendered from the rows as they are when it is sent: with two workers the first
    # may already show both pings. None ever claims more than happened.
    assert all(("Running" in f and "1 of 2" in f) or ("Succeeded" in f and "2 of 2" in f) for f in fragments)
    assert "<td>default</td>" in fragments[-1]
    assert "<td>gpu</td>" in fragments[-1]
