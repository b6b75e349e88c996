"""A debate run whose worker is killed mid-chunk finishes by itself, with no turn stored twice and
the outcomes of an uninterrupted run (real `celery worker` processes on Redis and PostgreSQL)."""

from __future__ import annotations

import tempfile
import uuid

import pytest

from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.debates.actions import do_create_run, do_start_run
from evalhub.debates.models import DebateTurn
from evalhub.debates.runner import run_debate_chunk
from evalhub.jobs.chunks import pending_chunk_ids
from evalhub.jobs.models import Job, JobChunk, JobStatus
from evalhub.llm.testing import FakeLLMServer
from tests.conftest import requires_redis
from tests.jobs.workers import kill, on_postgres, start_worker, stop_all, through_the_broker, wait_for  # noqa: F401

pytestmark = [requires_redis, on_postgres, pytest.mark.redis, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
pytestmark.append(pytest.mark.usefixtures("through_the_broker"))


def disagree(model: str, messages) -> str:
    return f"My view.\n{1 + int(model.rsplit('-', 1)[-1]) % 2}"  # agents 0 and 2 say 1, agent 1 says 2


def make_run(server, tag: str):
    agents = [f"openai-compatible:{server.url}/v1|agent-{tag}-{i}" for i in range(3)]
    return do_create_run(
        name=f"killed {tag}",
        benchmark=Benchmark.objects.get(slug="demo"),
        criterion=Criterion.objects.get(slug="helpfulness"),
        model_a=LanguageModel.objects.get(slug="demo-thorough"),
        model_b=LanguageModel.objects.get(slug="demo-terse"),
        agents=agents,
        rounds=2,
    )


def outcomes(run) -> list[tuple]:
    return sorted(run.debates.values_list("prompt__external_id", "status", "verdict", "rounds_used"))


@pytest.mark.parametrize(("pool", "how"), [("threads", "SIGKILL"), ("solo", "SIGTERM then SIGKILL")])
def test_a_debate_worker_killed_mid_chunk_leaves_a_run_that_finishes_by_itself(demo, pool, how, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "test-key")
    tag = uuid.uuid4().hex[:8]  # fresh agent names: no answer comes from a response cache
    with FakeLLMServer(reply_for_model=disagree, api_key="test-key", latency_s=0.6) as server:
        run = do_start_run(make_run(server, tag))  # sent to the broker: no worker yet
        with tempfile.TemporaryDirectory() as data_dir:
            first, second = start_worker("first", pool, data_dir), None
            try:
                wait_for(
                    lambda: (
                        JobChunk.objects.filter(job=run.job, heartbeat_at__isnull=False).exists()
                        and server.request_count >= 12
                    ),
                    90,
                    "the first worker to be debating",
                )
                killed_at = kill(first, how)
                second = start_worker("second", pool, data_dir)
                done_at = wait_for(lambda: Job.objects.get(pk=run.job_id).finished, 120, "the run to finish")
            finally:
                stop_all(first, second)
        job = Job.objects.get(pk=run.job_id)
        assert job.status == JobStatus.SUCCEEDED, job.message
        assert done_at - killed_at < 60
        turns = list(DebateTurn.objects.filter(debate__run=run).values_list("debate_id", "round", "agent"))
        assert len(turns) == len(set(turns)) == run.debates.count() * 3 * 2, "every turn once"

        straight = do_start_run(make_run(server, tag), enqueue=False)
        for chunk_id in pending_chunk_ids(straight.job):
            run_debate_chunk(chunk_id)
        assert outcomes(run) == outcomes(straight), "the outcomes of an uninterrupted run"
