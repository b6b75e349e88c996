"""A generation run whose worker is killed mid-chunk finishes by itself with every response once
(real `celery worker` processes on Redis and PostgreSQL)."""

from __future__ import annotations

import random

import pytest

from evalhub.catalog.models import Response
from evalhub.celery import app as celery_app
from evalhub.generation.actions import do_create_generation_run
from evalhub.generation.config import GenerationConfig
from evalhub.jobs.chunks import pending_chunk_ids
from evalhub.jobs.models import Job, JobChunk, JobStatus
from evalhub.jobs.runners import work_chunk
from tests.conftest import requires_redis
from tests.jobs.workers import kill_mid_chunk_then_finish, on_postgres, through_the_broker  # noqa: F401

pytestmark = [requires_redis, on_postgres, pytest.mark.redis, pytest.mark.slow, pytest.mark.django_db(transaction=True)]
pytestmark.append(pytest.mark.usefixtures("through_the_broker"))


def test_a_generation_worker_killed_mid_chunk_leaves_a_run_that_finishes_by_itself(
    maths, server, candidates, answer_template
):
    server.state.latency_s = 0.3
    fields = {
        "benchmark": maths["benchmark"],
        "candidates": candidates,
        "template": answer_template,
        "tiers": [0],
        "samples": 4,
        "temperature": 0.7,
        "seed": random.randrange(10**9),
    }
    run = do_create_generation_run(GenerationConfig(**fields), chunk_prompts=1, enqueue=False)
    took = kill_mid_chunk_then_finish(run.job, lambda: server.request_count >= 3)
    job = Job.objects.get(pk=run.job_id)
    assert job.status == JobStatus.SUCCEEDED, job.message
    assert took < 60
    assert JobChunk.objects.filter(job=job, attempts__gte=2).exists()
    made = list(Response.objects.filter(model__in=candidates).values_list("prompt_id", "model_id", "variant", "text"))
    assert len(made) == len({m[:3] for m in made}) == 3 * 2 * 4, "every response once"

    celery_app.conf.task_always_eager = True
    Response.objects.filter(model__in=candidates).delete()
    straight = do_create_generation_run(GenerationConfig(**fields), chunk_prompts=1, enqueue=False)
    for chunk_id in pending_chunk_ids(straight.job):
        work_chunk(chunk_id)
    again = Response.objects.filter(model__in=candidates).values_list("prompt_id", "model_id", "variant", "text")
    assert sorted(again) == sorted(made), "the responses of an uninterrupted run"
