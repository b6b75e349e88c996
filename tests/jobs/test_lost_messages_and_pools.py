"""A deployment on its own defaults holds: a chunk whose message was lost is sent again, a worker's
connection pool holds its threads, and dead pooled connections are replaced instead of served."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection, connections
from django.utils import timezone

from evalhub.jobs.actions import do_fail_job
from evalhub.jobs.chunks import do_resend_unclaimed_chunks, do_resume_job
from evalhub.jobs.models import Job, JobChunk, JobStatus
from evalhub.jobs.runners import work_chunk
from evalhub.jobs.watchdog import look_once
from tests.jobs.test_a_new_kind import WordCountConfig, responses, sent, word_count  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


def test_a_chunk_whose_message_was_lost_is_sent_again_past_its_queues_wait_and_then_runs(
    word_count,  # noqa: F811
    responses,  # noqa: F811
    sent,  # noqa: F811
    settings,
    django_capture_on_commit_callbacks,
    monkeypatch,
):
    # The watchdog's thread ends its connection after a look; here the look runs in the test's transaction.
    monkeypatch.setattr("evalhub.jobs.watchdog.close_old_connections", lambda: None)
    with django_capture_on_commit_callbacks(execute=True):
        job = word_count.create(WordCountConfig(responses), size=3)
    first, second = job.chunks.order_by("index")
    assert [args[0] for args, _ in sent] == [first.pk, second.pk]
    sent.clear()  # both messages dropped on purpose: as a task that failed before its claim leaves them
    assert do_resend_unclaimed_chunks() == 0, "not yet: a queue may be busy"

    # The second was taken after a wait of 100 s: the queue's current wait.
    now = timezone.now()
    JobChunk.objects.filter(pk=second.pk).update(
        sent_at=now - timedelta(seconds=400), claimed_at=now - timedelta(seconds=300), heartbeat_at=now
    )
    bound = settings.EVALHUB_UNCLAIMED_SECONDS
    JobChunk.objects.filter(pk=first.pk).update(sent_at=now - timedelta(seconds=bound + 50))
    assert do_resend_unclaimed_chunks() == 0, "within the bound past the queue's wait of 100 s"

    JobChunk.objects.filter(pk=first.pk).update(sent_at=now - timedelta(seconds=bound + 150))
    with django_capture_on_commit_callbacks(execute=True):
        assert look_once() == 1, "the watchdog every worker runs sends it again"
    assert [args[0] for args, _ in sent] == [first.pk]
    assert "taken by no worker; sent again" in Job.objects.get(pk=job.pk).message
    assert do_resend_unclaimed_chunks() == 0, "sent once per bound, not at every look"
    assert work_chunk(first.pk) == "recorded"


def test_the_job_page_says_how_many_chunks_wait_for_a_worker_and_since_when(
    word_count,  # noqa: F811
    responses,  # noqa: F811
    sent,  # noqa: F811
    login,
    viewer,
    django_capture_on_commit_callbacks,
):
    with django_capture_on_commit_callbacks(execute=True):
        job = word_count.create(WordCountConfig(responses), size=3)
    Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING, started_at=timezone.now())
    since = timezone.localtime(job.chunks.order_by("sent_at").first().sent_at).strftime("%H:%M:%S")
    controls = login(viewer).get(f"/jobs/{job.pk}/controls/").content.decode()
    assert f"2 chunks waiting for a worker since {since}" in controls


def worker_pool_size(**env: str) -> subprocess.CompletedProcess:
    """A process set up as `celery worker -P threads -c 16` is, up to its first task: the size of its pool."""
    code = (
        "import django; django.setup()\n"
        "from celery import signals\n"
        "from django.db import connections\n"
        "class Worker: concurrency = 16; pool_cls = 'threads'\n"
        "signals.worker_init.send(sender=Worker())\n"
        "print(connections.settings['default']['OPTIONS']['pool']['max_size'])\n"
    )
    environment = {
        "PATH": os.environ["PATH"],
        "DJANGO_SETTINGS_MODULE": "evalhub.settings",
        "SECRET_KEY": "k",
        "DATABASE_URL": "postgres://u@db:5432/evalhub",  # nothing connects: the pool is made on first use
        "EVALHUB_DATA_DIR": os.environ.get("EVALHUB_DATA_DIR", "/tmp"),
        **env,
    }
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True)


def test_a_sixteen_thread_worker_holds_a_connection_for_every_thread_and_says_so_when_configured_lower():
    default = worker_pool_size()
    assert default.returncode == 0, default.stderr
    assert default.stdout.strip() == "50", "16 tasks x (task, heartbeat, database thread) + 2"
    assert "cannot hold" not in default.stderr
    configured = worker_pool_size(EVALHUB_DB_POOL_MAX_SIZE="4")
    assert configured.stdout.strip() == "50"
    assert "EVALHUB_DB_POOL_MAX_SIZE=4 cannot hold this worker's threads" in configured.stderr
    larger = worker_pool_size(EVALHUB_DB_POOL_MAX_SIZE="64")
    assert larger.stdout.strip() == "64", "a larger pool is kept"


on_a_pool = pytest.mark.skipif(
    not connection.settings_dict.get("OPTIONS", {}).get("pool"),
    reason="PostgreSQL with a connection pool (DATABASE_URL) is what drops connections here",
)


@on_a_pool
@pytest.mark.django_db(transaction=True)
def test_after_postgresql_ends_every_pooled_connection_the_next_requests_succeed(admin_user, client):
    import psycopg

    client.force_login(admin_user)
    for _ in range(3):
        assert client.get("/jobs/").status_code == 200
    pool = connection.pool
    idle = [pooled.info.backend_pid for pooled in list(pool._pool)]  # the connections the pool holds now
    assert idle, "the pool holds the connection the last request gave back"
    params = connection.get_connection_params()
    with psycopg.connect(**{**params, "autocommit": True}) as admin:
        admin.execute("SELECT pg_terminate_backend(pid) FROM unnest(%s::int[]) AS pid", [idle])
    try:
        for _ in range(5):
            assert client.get("/jobs/").status_code == 200
        health = client.get("/healthz")
        assert health.status_code == 200 and health.json()["database"] == "ok"
    finally:
        # A pool whose connections the server ended is not handed to the tests after this one: the next
        # test (a real worker's round trip) once waited 30 s at its first query after it.
        connection.close()
        connection.close_pool()


def test_a_job_that_failed_while_another_chunk_finished_reads_n_of_n_once_resumed_and_done(
    word_count,  # noqa: F811
    responses,  # noqa: F811
    sent,  # noqa: F811
):
    job = word_count.create(WordCountConfig(responses), size=3, enqueue=False)
    first, second = job.chunks.order_by("index")
    # The second chunk's worker took it; then the first chunk's error failed the job, and the second
    # chunk's worker went on and recorded its results (as a worker past its claim does).
    runner = word_count(Job.objects.get(pk=job.pk))
    result = runner.work(second)
    do_fail_job(Job.objects.get(pk=job.pk), "Chunk 1: OperationalError: couldn't get a connection")
    assert runner.record(second, result)
    assert Job.objects.get(pk=job.pk).progress_done == 0, "a failed job's count does not move"
    do_resume_job(Job.objects.get(pk=job.pk))
    assert work_chunk(first.pk) == "recorded"
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED
    assert (job.progress_done, job.progress_total) == (6, 6), "every unit stored: 6 of 6"


@on_a_pool
@pytest.mark.django_db
def test_a_ready_worker_whose_pool_the_server_cannot_hold_says_so_in_its_log(monkeypatch, caplog):
    """A 40-thread worker's pool is fitted to 122 connections, past a stock PostgreSQL's 100: its threads
    then waited for connections the server refused ("too many clients"), and nothing said why."""
    from celery import signals

    from evalhub.jobs.apps import check_pool_room

    assert any(key[0] == "evalhub-check-pool-room" for key, _ in signals.worker_ready.receivers)
    with connection.cursor() as cursor:
        cursor.execute("SHOW max_connections")
        limit = int(cursor.fetchone()[0])
    pool = connections.settings["default"]["OPTIONS"]["pool"]
    caplog.set_level("WARNING", logger="evalhub.jobs")
    monkeypatch.setitem(pool, "max_size", limit + 1)
    warning = check_pool_room()
    assert f"pool may open {limit + 1} connections" in warning
    assert f"max_connections {limit}" in warning and "raise max_connections to at least" in warning
    assert warning in caplog.text
    monkeypatch.setitem(pool, "max_size", 2)
    assert check_pool_room() == "", "a pool the server holds is not warned about"


def test_a_worker_that_cannot_ask_the_server_says_so_and_goes_on(monkeypatch, caplog):
    from django.db import OperationalError

    from evalhub import db_pool
    from evalhub.jobs.apps import check_pool_room

    def unreachable(alias: str = "default") -> str:
        raise OperationalError("connection refused")

    monkeypatch.setattr(db_pool, "pool_room_on_server", unreachable)
    caplog.set_level("WARNING", logger="evalhub.jobs")
    assert "could not ask PostgreSQL" in check_pool_room()
    assert "connection refused" in caplog.text
