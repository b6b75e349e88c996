"""The shipped worker shape (16 threads) on a pool configured far lower: every run queued at once
ends Succeeded by itself (a real `celery worker` on Redis and PostgreSQL)."""

from __future__ import annotations

import tempfile
import uuid

import pytest

from evalhub.catalog.demo import do_load_demo
from evalhub.debates.actions import do_create_judge_run, do_start_run
from evalhub.debates.models import DebateTurn
from evalhub.jobs.chunks import enqueue_chunks
from evalhub.jobs.models import Job, JobStatus
from evalhub.llm.testing import FakeLLMServer
from tests.conftest import requires_redis
from tests.debates.test_killed_worker import make_run
from tests.jobs.workers import on_postgres, start_worker, stop_all, through_the_broker, wait_for  # noqa: F401

pytestmark = [requires_redis, on_postgres, pytest.mark.redis, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
pytestmark.append(pytest.mark.usefixtures("through_the_broker"))


def agreeing(model: str, messages) -> str:
    return "Both are fine; the first is clearer.\n1"


def test_runs_queued_at_once_on_a_sixteen_thread_worker_with_a_pool_of_four_all_succeed(monkeypatch):
    """Before, the pool kept its configured 4 connections for 16 threads (each task also holds its
    heartbeat's and its database thread's): threads waited past the pool's timeout and runs failed
    with "couldn't get a connection". The timeout is 2 s here so that a wait shows within the test."""
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "test-key")
    tag = uuid.uuid4().hex[:8]  # fresh agent names: no answer comes from a response cache
    with FakeLLMServer(reply_for_model=agreeing, api_key="test-key", latency_s=0.3) as server:
        do_load_demo()
        runs = [do_start_run(make_run(server, f"{tag}-{n}"), enqueue=False) for n in range(8)]
        judge = f"openai-compatible:{server.url}/v1|judge-{tag}"
        jobs = [run.job for run in runs]

        def all_finished() -> bool:
            return all(job.finished for job in Job.objects.filter(pk__in=[job.pk for job in jobs]))

        with tempfile.TemporaryDirectory() as data_dir:
            worker = start_worker(
                "busy", "threads", data_dir, concurrency=16, EVALHUB_DB_POOL_MAX_SIZE="4", EVALHUB_DB_POOL_TIMEOUT="2"
            )
            try:
                for job in jobs:
                    enqueue_chunks(job)
                # A judge run on the first run's pairs (the agents agree: each has a verdict), queued
                # while the other debates run.
                wait_for(lambda: Job.objects.get(pk=runs[0].job_id).finished, 120, "the first debate run")
                judged = do_create_judge_run(reference=runs[0], judge=judge, samples=2, enqueue=False)
                jobs.append(judged.job)
                enqueue_chunks(judged.job)
                wait_for(all_finished, 180, "every job")
            finally:
                stop_all(worker)
    ended = {job.title: (job.status, job.message) for job in Job.objects.filter(pk__in=[j.pk for j in jobs])}
    assert all(status == JobStatus.SUCCEEDED for status, _ in ended.values()), ended
    for run in runs:
        turns = list(DebateTurn.objects.filter(debate__run=run).values_list("debate_id", "round", "agent"))
        assert len(turns) == len(set(turns)), "no turn twice"
