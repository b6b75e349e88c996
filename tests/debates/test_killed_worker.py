"""A debate run whose worker is killed mid-chunk finishes by itself, with no turn stored twice and
the outcomes of an uninterrupted run (real `celery worker` processes on Redis and PostgreSQL)."""

from __future__ import annotations

import uuid

import pytest

from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.debates.actions import do_create_run, do_start_run
from evalhub.debates.models import DebateTurn
from evalhub.jobs.chunks import pending_chunk_ids
from evalhub.jobs.models import Job, JobChunk, JobStatus
from evalhub.jobs.runners import work_chunk
from evalhub.llm.testing import FakeLLMServer
from tests.conftest import requires_redis
from tests.jobs.workers import kill_mid_chunk_then_finish, on_postgres, through_the_broker  # noqa: F401

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
        run = do_start_run(make_run(server, tag), enqueue=False)
        took = kill_mid_chunk_then_finish(run.job, lambda: server.request_count >= 12, pool, how)
        job = Job.objects.get(pk=run.job_id)
        assert job.status == JobStatus.SUCCEEDED, job.message
        assert took < 60
        turns = list(DebateTurn.objects.filter(debate__run=run).values_list("debate_id", "round", "agent"))
        assert len(turns) == len(set(turns)) == run.debates.count() * 3 * 2, "every turn once"

        straight = do_start_run(make_run(server, tag), enqueue=False)
        for chunk_id in pending_chunk_ids(straight.job):
            work_chunk(chunk_id)
        assert outcomes(run) == outcomes(straight), "the outcomes of an uninterrupted run"


def test_a_judge_worker_killed_mid_chunk_leaves_a_judge_run_that_finishes_by_itself(demo, monkeypatch):
    from evalhub.debates.actions import do_create_judge_run
    from evalhub.debates.models import DebateStatus, JudgeVerdict
    from evalhub.jobs.runners import work_chunk

    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "test-key")
    with FakeLLMServer(reply_for_model=disagree, api_key="test-key", latency_s=0.5) as server:
        reference = make_run(server, uuid.uuid4().hex[:8])
        reference.debates.update(status=DebateStatus.CONSENSUS, verdict=1)
        judge = f"openai-compatible:{server.url}/v1|judge-{uuid.uuid4().hex[:8]}-1"
        fields = {"reference": reference, "judge": judge, "samples": 2, "temperature": 0.5}
        run = do_create_judge_run(enqueue=False, **fields)
        took = kill_mid_chunk_then_finish(run.job, lambda: server.request_count >= 4)
        job = Job.objects.get(pk=run.job_id)
        assert job.status == JobStatus.SUCCEEDED, job.message
        assert took < 60
        assert JobChunk.objects.filter(job=job, attempts__gte=2).exists()
        keys = list(run.verdicts.values_list("debate_id", "reversed_order", "sample"))
        assert len(keys) == len(set(keys)) == reference.debates.count() * 2 * 2, "every judgment once"

        straight = do_create_judge_run(enqueue=False, **fields)
        for chunk_id in pending_chunk_ids(straight.job):
            work_chunk(chunk_id)

        def verdicts(judge_run) -> list[tuple]:
            rows = JudgeVerdict.objects.filter(judge_run=judge_run)
            return sorted(rows.values_list("debate_id", "reversed_order", "sample", "verdict"))

        assert verdicts(run) == verdicts(straight)
