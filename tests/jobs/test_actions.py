"""Job writes: worker checks, heartbeats, expiry and cancellation."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evalhub.jobs.actions import (
    do_create_job,
    do_expire_worker_check,
    do_record_heartbeat,
    do_request_stop,
    do_start_worker_check,
)
from evalhub.jobs.models import Job, JobStatus, StopRequest, WorkerHeartbeat
from evalhub.jobs.worker_check import describe_worker

pytestmark = pytest.mark.django_db

INFO = {"hostname": "w1", "pid": 1, "latency_ms": 5, "torch_version": "", "cuda_available": False, "device_name": ""}


def test_a_worker_check_enqueues_one_ping_per_queue_after_commit(admin_user, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        job = do_start_worker_check(admin_user)
    assert len(callbacks) >= 1
    job.refresh_from_db()
    # Tasks run eagerly in tests: both queues answered, so the check succeeded.
    assert sorted(job.heartbeats.values_list("queue", flat=True)) == ["default", "gpu"]
    assert (job.status, job.progress_done, job.progress_total) == (JobStatus.SUCCEEDED, 2, 2)


def test_a_heartbeat_recorded_twice_for_one_queue_is_stored_once(admin_user):
    job = do_create_job("worker_check", "Worker check", total=2, params={"queues": ["default", "gpu"]})
    do_record_heartbeat(job.pk, "default", INFO)
    do_record_heartbeat(job.pk, "default", {**INFO, "pid": 2})
    job.refresh_from_db()
    assert WorkerHeartbeat.objects.filter(job=job).count() == 1
    assert (job.status, job.progress_done) == (JobStatus.RUNNING, 1)


def test_a_worker_check_past_its_time_fails_naming_the_silent_queue(admin_user):
    job = do_create_job("worker_check", "Worker check", total=2, params={"queues": ["default", "gpu"], "timeout_s": 30})
    do_record_heartbeat(job.pk, "default", INFO)
    job.refresh_from_db()
    assert do_expire_worker_check(job).status == JobStatus.RUNNING  # not yet
    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(seconds=31))
    job = do_expire_worker_check(Job.objects.get(pk=job.pk))
    assert job.status == JobStatus.FAILED
    assert job.message == "No worker answered on: gpu."
    assert "celery -A evalhub worker -Q gpu --pool=solo" in job.error
    assert do_record_heartbeat(job.pk, "gpu", INFO) is None, "a late answer does not reopen a finished check"


def test_cancelling_a_queued_job_stops_it_at_once_and_a_finished_one_stays_as_it_is():
    job = do_request_stop(do_create_job("gem", "GEM"), StopRequest.CANCEL)
    assert job.status == JobStatus.CANCELLED
    assert job.message == "Cancelled before anything was done."
    Job.objects.filter(pk=job.pk).update(status=JobStatus.SUCCEEDED)
    job = do_request_stop(Job.objects.get(pk=job.pk), StopRequest.CANCEL)
    assert job.status == JobStatus.SUCCEEDED
    assert job.requested == ""


def test_a_worker_describes_itself_with_its_latency():
    sent = (timezone.now() - timedelta(milliseconds=250)).isoformat()
    info = describe_worker("default", sent)
    assert 250 <= info["latency_ms"] < 5000
    assert info["pid"] > 0
    assert info["torch_version"]


def test_the_job_page_shows_the_heartbeats(login, viewer):
    job = do_create_job("worker_check", "Worker check", total=2, params={"queues": ["default", "gpu"]})
    do_record_heartbeat(job.pk, "gpu", {**INFO, "hostname": "gpu-box-7"})
    body = login(viewer).get(f"/jobs/{job.pk}/").content.decode()
    assert "gpu-box-7" in body
    assert f'ws-connect="/ws/jobs/{job.pk}/"' in body


def test_the_job_page_shows_its_configuration_as_labelled_lines(login, viewer):
    params = {"queues": ["default", "gpu"], "check_position": False, "privileged_sources": [None, ""]}
    job = do_create_job("worker_check", "Worker check", total=2, params=params)
    body = login(viewer).get(f"/jobs/{job.pk}/").content.decode()
    assert "<dt>check position</dt><dd>no</dd>" in body
    assert "<dt>queues</dt><dd>default, gpu</dd>" in body
    assert "{&#x27;" not in body
    assert "[None" not in body
    assert "False" not in body


def test_a_running_job_whose_chunks_stopped_beating_is_stalled_and_one_beating_now_is_not():
    from evalhub.jobs.models import JobChunk

    job = do_create_job("worker_check", "Stalled", total=2)
    Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, started_at=timezone.now() - timedelta(minutes=5))
    JobChunk.objects.create(job=job, index=0, unit_ids=[1], heartbeat_at=timezone.now() - timedelta(minutes=4))
    job.refresh_from_db()
    assert job.stalled_since() is not None
    JobChunk.objects.filter(job=job).update(heartbeat_at=timezone.now())
    assert job.stalled_since() is None, "a chunk beating now is work going on"


def test_resuming_a_queued_job_never_takes_a_chunk_from_a_worker_that_is_beating_it():
    from evalhub.jobs.chunks import do_resume_job
    from evalhub.jobs.models import JobChunk

    job = do_create_job("worker_check", "Queued", total=2)
    live = JobChunk.objects.create(job=job, index=0, unit_ids=[1], heartbeat_at=timezone.now(), worker="w:1:1")
    lost = JobChunk.objects.create(
        job=job, index=1, unit_ids=[2], heartbeat_at=timezone.now() - timedelta(minutes=5), worker="w:2:1"
    )
    do_resume_job(job)
    live.refresh_from_db()
    lost.refresh_from_db()
    assert (live.worker, lost.worker) == ("w:1:1", "")
    assert lost.heartbeat_at is None


def test_a_partial_job_with_only_invalid_answers_offers_no_retry_and_a_resume_changes_nothing():
    from evalhub.jobs.chunks import do_resume_job
    from evalhub.jobs.models import JobChunk

    job = do_create_job("worker_check", "Partial", total=1)
    JobChunk.objects.create(job=job, index=0, unit_ids=[1], done_at=timezone.now())
    Job.objects.filter(pk=job.pk).update(status=JobStatus.PARTIAL, units_invalid=2)
    job.refresh_from_db()
    assert not job.can_resume, "invalid answers are stored: running again would change nothing"
    assert do_resume_job(job).status == JobStatus.PARTIAL, "never left waiting as Queued with nothing to run"
