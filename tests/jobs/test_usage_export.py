"""Every job's usage as a file: calls, cached calls, input, output and reasoning tokens and cost."""

from __future__ import annotations

import csv
import io
import json

import pytest

from evalhub.core.runs.usage import Usage
from evalhub.jobs.models import Job

pytestmark = pytest.mark.django_db


@pytest.fixture
def jobs(db):
    spent = Usage(calls=4, cached_calls=1, input_tokens=120, output_tokens=80, cost_usd=0.02, reasoning_tokens=30)
    return [
        Job.objects.create(kind="judge_run", title="Judge gpt-5-pro", usage=spent.as_dict()),
        Job.objects.create(kind="debate_run", title="Debate", usage={}),
    ]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_the_usage_of_every_job_is_exported_with_reasoning_tokens_and_cached_calls(jobs, login, viewer, fmt):
    answer = login(viewer).get(f"/jobs/usage.{fmt}")
    assert answer.status_code == 200
    text = answer.content.decode()
    rows = json.loads(text) if fmt == "json" else list(csv.DictReader(io.StringIO(text)))
    first, second = rows
    assert str(first["job"]) == str(jobs[0].pk) and first["kind"] == "judge_run"
    spent = {name: str(first[name]) for name in ("calls", "cached_calls", "input_tokens", "output_tokens")}
    assert spent == {"calls": "4", "cached_calls": "1", "input_tokens": "120", "output_tokens": "80"}
    assert str(first["reasoning_tokens"]) == "30" and float(first["cost_usd"]) == 0.02
    assert str(second["calls"]) == "0", "a job with no usage yet reads zero, not blank"
    assert first["created"] == jobs[0].created_at.isoformat(), "a time as ISO 8601, in CSV too"


def test_the_usage_export_is_for_people_with_a_role_only(jobs, login, outsider, viewer, client):
    assert client.get("/jobs/usage.csv").status_code == 302, "logged out: to the login page"
    assert login(outsider).get("/jobs/usage.csv").status_code == 403
    assert login(viewer).get("/jobs/usage.xml").status_code == 404
