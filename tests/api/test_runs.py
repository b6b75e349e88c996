"""Starting runs through the API: every kind of long work with a configuration has its operation, whose
body is that configuration in JSON (models by slug or id); the run starts through `JobRunner.create`,
so a configuration the form refuses is refused here with the same sentences, and nothing is made."""

from __future__ import annotations

import dataclasses

import pytest

from evalhub.accounts.actions import do_create_token
from evalhub.api.runs import body_of, config_from
from evalhub.api.uploads import UPLOAD
from evalhub.api.v1 import api
from evalhub.debates.config import DebateConfig, JudgeRunConfig
from evalhub.debates.models import DebateRun, JudgeRun
from evalhub.jobs.kinds import KINDS
from evalhub.jobs.models import Job

pytestmark = pytest.mark.django_db


def bearer(text: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {text}"}


def test_every_kind_with_a_configuration_can_be_started_and_its_body_has_every_field():
    paths = api.get_openapi_schema()["paths"]
    for kind in KINDS:
        config = KINDS.config_of(kind)
        if config is None or kind == UPLOAD:  # started by its file (tests/api/test_background_uploads.py)
            continue
        assert f"/api/v1/runs/{kind}" in paths, kind
        body = body_of(kind, config).model_json_schema()["properties"]
        assert set(body) == {field.name for field in dataclasses.fields(config)}, kind


DEBATE = {
    "name": "from a pipeline",
    "benchmark": "demo",
    "criterion": "helpfulness",
    "model_a": "demo-thorough",
    "model_b": "demo-terse",
    "agents": ["heuristic", "heuristic:reference"],
    "category": "math",
}


def test_a_debate_run_started_through_the_api_is_the_one_its_form_makes(client, demo, admin_user):
    token = do_create_token(admin_user, "CI", "write", 30)[1]
    answer = client.post("/api/v1/runs/debate", DEBATE, content_type="application/json", headers=bearer(token))
    assert answer.status_code == 200, answer.content
    job = Job.objects.get(pk=answer.json()["id"])
    run = DebateRun.objects.get(job=job)
    assert DebateConfig.of_run(run) == config_from(DebateConfig, DEBATE)
    assert job.created_by == admin_user and answer.json()["kind"] == "debate"


def test_a_configuration_the_form_refuses_is_refused_with_its_sentences_and_nothing_is_made(client, demo, admin_user):
    token = do_create_token(admin_user, "CI", "write", 30)[1]
    bad = {**DEBATE, "rounds": 0, "model_b": "demo-thorough"}
    answer = client.post("/api/v1/runs/debate", bad, content_type="application/json", headers=bearer(token))
    assert answer.status_code == 422
    expected = config_from(DebateConfig, bad).errors()
    assert expected and [e["message"] for e in answer.json()["errors"]] == expected
    assert not DebateRun.objects.exists() and not Job.objects.exists()


def test_an_unknown_model_or_run_is_named(client, demo, admin_user):
    token = do_create_token(admin_user, "CI", "write", 30)[1]
    answer = client.post(
        "/api/v1/runs/debate", {**DEBATE, "model_a": "nobody"}, content_type="application/json", headers=bearer(token)
    )
    assert answer.status_code == 422 and answer.json()["detail"] == "model_a: no language model 'nobody'"
    judged = client.post(
        "/api/v1/runs/judge_run",
        {"reference": 9999, "judge": "heuristic"},
        content_type="application/json",
        headers=bearer(token),
    )
    assert judged.status_code == 422 and "reference: no debate run 9999" in judged.json()["detail"]
    assert not JudgeRun.objects.exists()


def test_a_judge_run_on_a_debate_run_is_started_with_its_reference_by_id(client, demo, admin_user, make_run):
    reference = make_run()
    token = do_create_token(admin_user, "CI", "write", 30)[1]
    body = {"reference": reference.pk, "judge": "heuristic", "samples": 1}
    answer = client.post("/api/v1/runs/judge_run", body, content_type="application/json", headers=bearer(token))
    assert answer.status_code == 200, answer.content
    run = JudgeRun.objects.get(job_id=answer.json()["id"])
    assert JudgeRunConfig.of_run(run) == JudgeRunConfig(reference=reference, judge="heuristic", samples=1)


def test_a_spec_carrying_a_key_is_refused_without_the_key_in_the_answer(client, demo, admin_user, make_run):
    reference = make_run()
    token = do_create_token(admin_user, "CI", "write", 30)[1]
    secret = "sk-proj-" + "A1b2C3d4" * 4
    body = {"reference": reference.pk, "judge": f"openai:gpt-4o-mini?api_key={secret}"}
    answer = client.post("/api/v1/runs/judge_run", body, content_type="application/json", headers=bearer(token))
    assert answer.status_code == 422 and answer.json()["errors"]
    assert secret not in answer.content.decode() and "A1b2C3d4" not in answer.content.decode()
    assert not JudgeRun.objects.exists()
