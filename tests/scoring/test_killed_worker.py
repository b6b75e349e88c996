"""Real worker processes killed mid-chunk: the job finishes by itself, with nothing twice.

A `celery worker` subprocess on Redis and PostgreSQL takes the chunks of a DHP run whose judge
answers slowly; it is killed while it works (SIGKILL, or a redeploy's SIGTERM then SIGKILL). A
second worker, started after the kill, notices the silent chunk (no heartbeat for
EVALHUB_STALL_SECONDS) and runs it again; the job ends Succeeded with the scores of an
uninterrupted run. Runs on each pool the compose file uses: threads (default) and solo (gpu).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from evalhub.celery import QUEUES
from evalhub.celery import app as celery_app
from evalhub.jobs.chunks import enqueue_chunks
from evalhub.jobs.models import Job, JobChunk, JobStatus
from evalhub.scoring.models import JudgeScore
from tests.conftest import requires_redis
from tests.scoring.test_discernment import dhp_run, judge_reply, run_all, spec

ROOT = Path(__file__).resolve().parents[2]
on_postgres = pytest.mark.skipif(
    not settings.DATABASES["default"]["ENGINE"].endswith("postgresql"),
    reason="worker processes share the test database only on PostgreSQL (DATABASE_URL)",
)
pytestmark = [requires_redis, on_postgres, pytest.mark.redis, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def start_worker(name: str, pool: str, data_dir: str) -> subprocess.Popen:
    db = connection.settings_dict
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "evalhub.settings",
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST']}:{db['PORT']}/{db['NAME']}",
        "EVALHUB_DATA_DIR": data_dir,
        "EVALHUB_HEARTBEAT_SECONDS": "1",
        "EVALHUB_STALL_SECONDS": "4",
        "OPENAI_COMPATIBLE_API_KEY": "test-key",
    }
    command = [sys.executable, "-m", "celery", "-A", "evalhub", "worker", "-Q", ",".join(QUEUES), "-P", pool]
    command += ["-c", "2"] if pool == "threads" else []
    command += ["-n", f"{name}@%h", "--without-mingle", "--without-gossip", "-l", "WARNING"]
    return subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def wait_for(predicate, timeout: float, what: str) -> float:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return time.monotonic()
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")


def scores(run) -> list[tuple]:
    rows = JudgeScore.objects.filter(run=run).values_list("response__text", "metric", "repeat", "score", "valid")
    return sorted(rows)


@pytest.fixture
def through_the_broker():
    celery_app.conf.task_always_eager = False
    with celery_app.connection_for_write() as broker:  # nothing from earlier runs may be taken
        for queue in QUEUES:
            broker.default_channel.queue_purge(queue)
    yield
    celery_app.conf.task_always_eager = True


@pytest.mark.parametrize(("pool", "how"), [("threads", "SIGKILL"), ("solo", "SIGTERM then SIGKILL")])
def test_a_worker_killed_mid_chunk_leaves_a_job_that_finishes_by_itself_with_nothing_twice(
    summaries, server, through_the_broker, pool, how
):
    judge = f"perfect-{uuid.uuid4().hex[:8]}"  # a fresh name: no answer comes from a response cache
    server.state.reply_for_model = lambda model, messages: judge_reply(model.rsplit("-", 1)[0], messages)
    server.state.latency_s = 0.25
    run = dhp_run(summaries, [spec(server, judge)], repeats=2, chunk_prompts=6)
    job = run.job
    with tempfile.TemporaryDirectory() as data_dir:
        first = start_worker("first", pool, data_dir)
        second = None
        try:
            enqueue_chunks(job)
            wait_for(
                lambda: (
                    JobChunk.objects.filter(job=job, heartbeat_at__isnull=False).exists() and server.request_count >= 6
                ),
                90,
                "the first worker to be working on a chunk",
            )
            if how == "SIGKILL":
                first.kill()
            else:  # warm shutdown: it waits for its task, so the deploy kills it
                first.send_signal(signal.SIGTERM)
                time.sleep(1.0)
                first.kill()
            first.wait(10)
            killed_at = time.monotonic()
            assert Job.objects.get(pk=job.pk).status == JobStatus.RUNNING
            second = start_worker("second", pool, data_dir)
            done_at = wait_for(lambda: Job.objects.get(pk=job.pk).finished, 120, "the job to finish")
        finally:
            for worker in (first, second):
                if worker is not None and worker.poll() is None:
                    worker.kill()
                    worker.wait(10)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert done_at - killed_at < 60, "finished within a minute of the kill, without the broker's visibility timeout"
    assert JobChunk.objects.filter(job=job, attempts__gte=2).exists(), "the killed chunk ran again"

    celery_app.conf.task_always_eager = True
    straight = dhp_run(summaries, [spec(server, judge)], repeats=2, chunk_prompts=6)
    run_all(straight)
    assert scores(run) == scores(straight), "the same scores as an uninterrupted run, each once"
    assert JudgeScore.objects.filter(run=run).count() == JudgeScore.objects.filter(run=straight).count()
