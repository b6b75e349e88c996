"""evalhub's Python client against the API it calls: it covers every operation in the schema, and a
pipeline (upload, start, follow, fetch) runs through it and its command line against the whole Django
stack (over WSGI in this process, the jobs worked as they are queued)."""

from __future__ import annotations

import json

import httpx
import pytest
from django.core import signals
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections

from evalhub.accounts.actions import do_create_token
from evalhub.api.v1 import api
from evalhub.client import ApiError, Evalhub, JobFailed
from evalhub.client.__main__ import run
from evalhub.debates.models import DebateRun
from evalhub.jobs.models import Job, JobStatus
from tests.api.test_imports import GOOD

# Each operation of the schema → the client method that calls it (`start` serves every kind's).
CLIENT_METHODS = {
    "evalhub_api_v1_me": "me",
    "evalhub_api_jobs_list_jobs": "jobs",
    "evalhub_api_jobs_get_job": "job",
    "evalhub_api_jobs_pause_job": "pause",
    "evalhub_api_jobs_cancel_job": "cancel",
    "evalhub_api_jobs_resume_job": "resume",
    "evalhub_api_figures_list_benchmarks": "benchmarks",
    "evalhub_api_figures_win_rates": "win_rates",
    "evalhub_api_figures_judge_lab": "judge_lab",
    "evalhub_api_figures_leaderboard": "leaderboard",
    "evalhub_api_figures_pointwise": "pointwise",
    "evalhub_api_figures_export_table": "export",
    "evalhub_api_figures_judge_run_inspect_log": "judge_run_log",
    "evalhub_api_figures_judge_versions": "judge_versions",
    "evalhub_api_imports_import_benchmark": "upload",
    "evalhub_api_imports_import_judgments": "upload",
    "evalhub_api_imports_import_scores": "upload",
    "evalhub_api_imports_get_upload": "uploaded",
}


def test_the_client_has_a_method_for_every_operation_in_the_schema():
    schema = api.get_openapi_schema()
    for methods in schema["paths"].values():
        for operation in methods.values():
            name = (
                "start"
                if operation["operationId"].startswith("start_")
                else CLIENT_METHODS.get(operation["operationId"])
            )
            assert name is not None and callable(getattr(Evalhub, name, None)), operation["operationId"]


@pytest.fixture
def evalhub(db, admin_user):
    """The client over WSGI into this process's Django: as Django's test client does, a request does not
    close the test's connection (it would, inside the test's transaction, on PostgreSQL)."""
    token = do_create_token(admin_user, "pipeline", "write", 30)[1]
    transport = httpx.WSGITransport(app=get_wsgi_application())
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield Evalhub("http://testserver", token, transport=transport)
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


@pytest.mark.django_db(transaction=True)  # the debate's database thread reads what the request wrote
def test_a_pipeline_uploads_starts_follows_and_fetches_through_the_client(evalhub, demo, tmp_path):
    name, text = GOOD["judgments"]
    (tmp_path / name).write_text(text)
    landed = evalhub.upload("judgments", tmp_path / name, benchmark="piped", create_models=True)
    assert landed["benchmark"] == "piped" and landed["rows"] == 1
    # The chunks are worked as they are queued (Celery runs tasks eagerly in tests).
    job = evalhub.start(
        "debate",
        name="from the client",
        benchmark="demo",
        criterion="helpfulness",
        model_a="demo-thorough",
        model_b="demo-terse",
        agents=["heuristic", "heuristic:reference"],
        category="math",
    )
    seen = []
    done = evalhub.follow(job["id"], poll=0.01, progress=False, on_update=seen.append)
    assert done["status"] == "succeeded" and done["progress_done"] == done["progress_total"] > 0
    assert seen[-1] == done
    assert DebateRun.objects.get(job_id=job["id"]).name == "from the client"
    lab = evalhub.judge_lab(benchmark="demo", current=True, poll=0.01)
    assert lab["current"] and "judges" in lab["report"]


def test_a_refused_configuration_is_an_api_error_with_the_forms_sentences(evalhub, demo):
    with pytest.raises(ApiError) as refused:
        evalhub.start(
            "debate",
            name="x",
            benchmark="demo",
            criterion="helpfulness",
            model_a="demo-thorough",
            model_b="demo-thorough",
            agents=["heuristic"],
        )
    assert refused.value.status == 422 and refused.value.errors


def test_the_command_line_follows_a_job_and_exits_by_how_it_ended(evalhub, capsys, admin_user):
    cancelled = Job.objects.create(kind="nobody", title="t", status=JobStatus.CANCELLED, created_by=admin_user)
    assert run(["--quiet", "follow", str(cancelled.pk)], client=evalhub) == 1
    assert "cancelled" in capsys.readouterr().err.lower()
    partial = Job.objects.create(kind="nobody", title="t", status=JobStatus.PARTIAL, created_by=admin_user)
    assert run(["--quiet", "follow", str(partial.pk)], client=evalhub) == 3
    paused = Job.objects.create(kind="nobody", title="t", status=JobStatus.PAUSED, created_by=admin_user)
    assert run(["--quiet", "follow", str(paused.pk)], client=evalhub) == 4  # never waits for ever
    ok = Job.objects.create(kind="nobody", title="t", status=JobStatus.SUCCEEDED, created_by=admin_user)
    capsys.readouterr()
    assert run(["--quiet", "follow", str(ok.pk)], client=evalhub) == 0
    assert json.loads(capsys.readouterr().out)["id"] == ok.pk
    assert run(["start", "debate", '{"benchmark": "nowhere"}'], client=evalhub) == 2
    with pytest.raises(JobFailed):
        evalhub.follow(cancelled.pk, progress=False)


def test_the_client_downloads_an_export_table_and_names_a_refusal(evalhub, demo, tmp_path):
    from evalhub.catalog.exports import table_file
    from evalhub.catalog.models import Benchmark

    saved = evalhub.export("demo", "responses", tmp_path / "responses.csv", format="csv")
    # What the benchmark page serves (asked here, not through Django's test client, which would put back
    # the connection closing the fixture turned off).
    assert saved.read_bytes() == table_file(Benchmark.objects.get(slug="demo"), "responses", "csv").content
    with pytest.raises(ApiError, match="404: no export table 'nonesuch'"):
        evalhub.export("demo", "nonesuch", tmp_path / "x")


def test_waiting_for_current_figures_waits_out_a_503_and_otherwise_names_it():
    """At scale a figure's first computation is a worker's, and the API answers 503 meanwhile (issue 79)."""
    answers = iter(
        [
            httpx.Response(503, json={"detail": "a worker is computing the list of judged choices"}),
            httpx.Response(200, json={"current": False, "rows": []}),
            httpx.Response(200, json={"current": True, "rows": [{"model": "m"}]}),
            httpx.Response(503, json={"detail": "a worker is computing the list of judged choices"}),
        ]
    )
    client = Evalhub("http://evalhub.test", "token", transport=httpx.MockTransport(lambda request: next(answers)))
    assert client.win_rates(benchmark="ae", current=True, poll=0)["rows"] == [{"model": "m"}]
    with pytest.raises(ApiError) as refused:
        client.win_rates(benchmark="ae")
    assert refused.value.status == 503 and "judged choices" in str(refused.value)
