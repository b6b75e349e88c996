"""Real worker processes killed mid-chunk: the job finishes by itself, with nothing twice.

A `celery worker` subprocess on Redis and PostgreSQL takes the chunks of a DHP run whose judge
answers slowly; it is killed while it works (SIGKILL, or a redeploy's SIGTERM then SIGKILL). A
second worker, started after the kill, notices the silent chunk (no heartbeat for
EVALHUB_STALL_SECONDS) and runs it again; the job ends Succeeded with the scores of an
uninterrupted run. Runs on each pool the compose file uses: threads (default) and solo (gpu).
"""

from __future__ import annotations

import tempfile
import uuid

import pytest

from evalhub.celery import app as celery_app
from evalhub.jobs.chunks import enqueue_chunks
from evalhub.jobs.models import Job, JobChunk, JobStatus
from evalhub.scoring.models import JudgeScore
from tests.conftest import requires_redis
from tests.jobs.workers import kill, on_postgres, start_worker, stop_all, through_the_broker, wait_for  # noqa: F401
from tests.scoring.test_discernment import dhp_run, judge_reply, run_all, spec

pytestmark = [requires_redis, on_postgres, pytest.mark.redis, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
pytestmark.append(pytest.mark.usefixtures("through_the_broker"))


def scores(run) -> list[tuple]:
    rows = JudgeScore.objects.filter(run=run).values_list("response__text", "metric", "repeat", "score", "valid")
    return sorted(rows)


@pytest.mark.parametrize(("pool", "how"), [("threads", "SIGKILL"), ("solo", "SIGTERM then SIGKILL")])
def test_a_worker_killed_mid_chunk_leaves_a_job_that_finishes_by_itself_with_nothing_twice(
    summaries, server, pool, how
):
    judge = f"perfect-{uuid.uuid4().hex[:8]}"  # a fresh name: no answer comes from a response cache
    server.state.reply_for_model = lambda model, messages: judge_reply(model.rsplit("-", 1)[0], messages)
    server.state.latency_s = 0.25
    run = dhp_run(summaries, [spec(server, judge)], repeats=2, chunk_prompts=6)
    job = run.job
    with tempfile.TemporaryDirectory() as data_dir:
        first, second = start_worker("first", pool, data_dir), None
        try:
            enqueue_chunks(job)
            wait_for(
                lambda: (
                    JobChunk.objects.filter(job=job, heartbeat_at__isnull=False).exists() and server.request_count >= 6
                ),
                90,
                "the first worker to be working on a chunk",
            )
            killed_at = kill(first, how)
            assert Job.objects.get(pk=job.pk).status == JobStatus.RUNNING
            second = start_worker("second", pool, data_dir)
            done_at = wait_for(lambda: Job.objects.get(pk=job.pk).finished, 120, "the job to finish")
        finally:
            stop_all(first, second)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert done_at - killed_at < 60, "finished within a minute of the kill, without the broker's visibility timeout"
    assert JobChunk.objects.filter(job=job, attempts__gte=2).exists(), "the killed chunk ran again"

    celery_app.conf.task_always_eager = True
    straight = dhp_run(summaries, [spec(server, judge)], repeats=2, chunk_prompts=6)
    run_all(straight)
    assert scores(run) == scores(straight), "the same scores as an uninterrupted run, each once"
    assert JudgeScore.objects.filter(run=run).count() == JudgeScore.objects.filter(run=straight).count()
