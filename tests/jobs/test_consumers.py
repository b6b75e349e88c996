"""The job socket: who may listen, and what they hear."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async as sync_to_async

from evalhub.jobs.actions import broadcast_job, do_create_job
from tests.conftest import make_user, requires_redis
from tests.jobs.helpers import open_socket

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
def job(db):
    return do_create_job("worker_check", "Worker check", total=2)


async def test_a_viewer_hears_every_update_of_the_job_in_order(job):
    viewer = await sync_to_async(make_user)("v", "viewer")
    communicator, connected = await open_socket(f"/ws/jobs/{job.pk}/", viewer)
    assert connected
    current = await communicator.receive_from(timeout=5)
    assert "Queued" in current, "a new socket first gets the state as it is now"
    assert "0 of 2" in current, "a new socket first gets the state as it is now"
    for done in (1, 2):
        job.progress_done, job.message = done, f"step {done}"
        await sync_to_async(job.save)()
        await sync_to_async(broadcast_job)(job)
    first, second = await communicator.receive_from(timeout=5), await communicator.receive_from(timeout=5)
    assert 'id="job-status"' in first
    assert 'hx-swap-oob="true"' in first
    assert "step 1" in first
    assert "1 of 2" in first
    assert "step 2" in second
    await communicator.disconnect()


async def test_an_anonymous_socket_is_refused(job):
    communicator, connected = await open_socket(f"/ws/jobs/{job.pk}/")
    assert not connected


async def test_an_outsider_socket_is_refused(job):
    outsider = await sync_to_async(make_user)("o")
    communicator, connected = await open_socket(f"/ws/jobs/{job.pk}/", outsider)
    assert not connected


async def test_a_socket_for_a_job_that_does_not_exist_is_refused_like_any_other(db):
    viewer = await sync_to_async(make_user)("v", "viewer")
    communicator, connected = await open_socket("/ws/jobs/999999/", viewer)
    assert not connected


async def test_a_socket_from_a_foreign_origin_is_refused_even_with_a_session(job):
    viewer = await sync_to_async(make_user)("v", "viewer")
    communicator, connected = await open_socket(f"/ws/jobs/{job.pk}/", viewer, origin="http://evil.example")
    assert not connected


@requires_redis
async def test_an_idle_socket_on_the_redis_layer_stays_open_for_30_seconds_and_gets_the_next_fragment(job):
    # channels-redis blocks 5 s on each pop; a socket timeout of the same 5 s once dropped every
    # quiet viewer with a TimeoutError.
    viewer = await sync_to_async(make_user)("v", "viewer")
    communicator, connected = await open_socket(f"/ws/jobs/{job.pk}/", viewer)
    assert connected
    await communicator.receive_from(timeout=5)
    assert await communicator.receive_nothing(timeout=30, interval=1), "nothing is sent while nothing happens"
    job.message = "after a long silence"
    await sync_to_async(job.save)()
    await sync_to_async(broadcast_job)(job)
    assert "after a long silence" in await communicator.receive_from(timeout=5)
    await communicator.disconnect()


async def test_an_unknown_socket_path_is_closed_with_a_4404_code_not_a_server_error(db):
    viewer = await sync_to_async(make_user)("v", "viewer")
    communicator, (connected, code) = await open_socket("/ws/no-such-thing/", viewer, with_code=True)
    assert not connected
    assert code == 4404


async def test_a_page_that_embeds_the_card_hears_it_without_the_results_loader_it_has_no_slot_for(job, monkeypatch):
    """A debate run's page shows the job's card but no #job-results-slot: the card it hears must not load
    results into that slot (htmx logged a target error on every finished run's page)."""
    from evalhub.jobs.models import JobStatus

    monkeypatch.setattr("evalhub.jobs.live.results_url", lambda job: "/jobs/results-of-this-kind/")
    viewer = await sync_to_async(make_user)("v", "viewer")
    own, _ = await open_socket(f"/ws/jobs/{job.pk}/", viewer)
    embedded, connected = await open_socket(f"/ws/jobs/{job.pk}/?embedded=1", viewer)
    assert connected
    for socket in (own, embedded):
        await socket.receive_from(timeout=5)  # the state as it is now
    job.status = JobStatus.SUCCEEDED
    await sync_to_async(job.save)()
    await sync_to_async(broadcast_job)(job)
    on_its_page, elsewhere = await own.receive_from(timeout=5), await embedded.receive_from(timeout=5)
    assert 'hx-target="#job-results-slot"' in on_its_page
    assert "job-results-slot" not in elsewhere and "Succeeded" in elsewhere
    for socket in (own, embedded):
        await socket.disconnect()
