"""Real worker processes killed mid-chunk: the job finishes by itself, with nothing twice.

A `celery worker` subprocess on Redis and PostgreSQL takes the chunks of a DHP run whose judge
answers slowly; it is killed while it works (SIGKILL, or a redeploy's SIGTERM then SIGKILL). A
second worker, started after the kill, notices the silent chunk (no heartbeat for
EVALHUB_STALL_SECONDS) and runs it again; the job ends Succeeded with the scores of an
uninterrupted run. Runs on each pool the compose file uses: threads (default) and solo (gpu).
"""

from __future__ import annotations

import uuid

import pytest

from evalhub.celery import app as celery_app
from evalhub.jobs.models import Job, JobChunk, JobStatus
from evalhub.scoring.models import JudgeScore
from tests.conftest import requires_redis
from tests.jobs.workers import kill_mid_chunk_then_finish, on_postgres, through_the_broker  # noqa: F401
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
    took = kill_mid_chunk_then_finish(job, lambda: server.request_count >= 6, pool, how)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert took < 60, "finished within a minute of the kill, without the broker's visibility timeout"
    assert JobChunk.objects.filter(job=job, attempts__gte=2).exists(), "the killed chunk ran again"

    celery_app.conf.task_always_eager = True
    straight = dhp_run(summaries, [spec(server, judge)], repeats=2, chunk_prompts=6)
    run_all(straight)
    assert scores(run) == scores(straight), "the same scores as an uninterrupted run, each once"
    assert JudgeScore.objects.filter(run=run).count() == JudgeScore.objects.filter(run=straight).count()


def test_a_gem_worker_killed_mid_chunk_on_the_gpu_pool_leaves_a_job_that_finishes_by_itself(
    reviews, eval_lm, monkeypatch
):
    from evalhub.jobs.runners import work_chunk
    from evalhub.scoring.actions import do_create_gem_run
    from evalhub.scoring.gem.config import GemConfig
    from evalhub.scoring.models import GemPairScore

    config = GemConfig(
        benchmark=reviews["benchmark"],
        candidates=[reviews["model"]],
        references=reviews["humans"],
        variants=["gem-raw"],
        evaluation_lm=eval_lm,
    )
    run = do_create_gem_run(config, chunk_prompts=1, enqueue=False)
    # The tiny model scores a chunk in a blink: the workers' scorer waits first, so the kill lands mid-chunk.
    monkeypatch.setenv("SLOW_SCORER_DELAY", "2")
    took = kill_mid_chunk_then_finish(run.job, lambda: True, "solo", "SIGKILL", module="tests.jobs.slow_worker")
    job = Job.objects.get(pk=run.job_id)
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert took < 60
    assert JobChunk.objects.filter(job=job, attempts__gte=2).exists()
    celery_app.conf.task_always_eager = True
    straight = do_create_gem_run(config, chunk_prompts=1, enqueue=False)
    for chunk_id in straight.chunks.values_list("pk", flat=True):
        work_chunk(chunk_id)

    def pairs(gem_run) -> list[tuple]:
        rows = GemPairScore.objects.filter(run=gem_run).values_list("candidate_id", "reference_id", "pmi")
        return sorted((c, r, round(p, 6)) for c, r, p in rows)

    assert pairs(run) == pairs(straight), "every pair once, with the scores of an uninterrupted run"
