"""Real `celery worker` processes for the killed-worker tests: started on the test database, killed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from evalhub.celery import QUEUES
from evalhub.celery import app as celery_app

ROOT = Path(__file__).resolve().parents[2]
on_postgres = pytest.mark.skipif(
    not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"),
    reason="worker processes share the test database only on PostgreSQL (DATABASE_URL)",
)


def start_worker(
    name: str, pool: str, data_dir: str, module: str = "celery", concurrency: int = 2, **more_env: str
) -> subprocess.Popen:
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "evalhub.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "EVALHUB_DATA_DIR": data_dir,
        "EVALHUB_HEARTBEAT_SECONDS": "1",
        "EVALHUB_STALL_SECONDS": "4",
        "OPENAI_COMPATIBLE_API_KEY": "test-key",
        **more_env,
    }
    command = [sys.executable, "-m", module, "-A", "evalhub", "worker", "-Q", ",".join(QUEUES), "-P", pool]
    command += ["-c", str(concurrency)] if pool == "threads" else []
    command += ["-n", f"{name}@%h", "--without-mingle", "--without-gossip", "-l", "WARNING"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_for(predicate, timeout: float, what: str) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic()
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


@pytest.fixture
def through_the_broker():
    celery_app.conf.task_always_eager = False
    with celery_app.connection_for_write() as broker:  # nothing from earlier runs may be taken
        for queue in QUEUES:
            broker.default_channel.queue_purge(queue)
    yield
    celery_app.conf.task_always_eager = True


def kill(worker: subprocess.Popen, how: str) -> float:
    """SIGKILL, or a redeploy's warm shutdown cut short (SIGTERM, then SIGKILL a second later);
    returns when it was dead."""
    if how == "SIGKILL":
        worker.kill()
    else:
        worker.send_signal(signal.SIGTERM)
        time.sleep(1.0)
        worker.kill()
    worker.wait(10)
    return time.monotonic()


def stop_all(*workers: subprocess.Popen | None) -> None:
    for worker in workers:
        if worker is not None and worker.poll() is None:
            worker.kill()
            worker.wait(10)


def kill_mid_chunk_then_finish(
    job, working: Callable[[], bool], pool: str = "threads", how: str = "SIGKILL", module: str = "celery"
) -> float:
    """Hand the job's chunks to a first worker, kill it once `working()` says it is mid-chunk, start
    a second one, and wait for the job to end by itself; returns seconds from the kill to the end."""
    import tempfile

    from evalhub.jobs.chunks import enqueue_chunks
    from evalhub.jobs.models import Job, JobChunk

    with tempfile.TemporaryDirectory() as data_dir:
        first, second = start_worker("first", pool, data_dir, module), None
        try:
            enqueue_chunks(job)
            wait_for(
                lambda: JobChunk.objects.filter(job=job, heartbeat_at__isnull=False).exists() and working(),
                90,
                "the first worker to be working on a chunk",
            )
            killed_at = kill(first, how)
            second = start_worker("second", pool, data_dir, module)
            done_at = wait_for(lambda: Job.objects.get(pk=job.pk).finished, 120, "the job to finish")
        finally:
            stop_all(first, second)
    return done_at - killed_at
