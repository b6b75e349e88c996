"""The production path for a pipeline: the client over real HTTP against a live server, the run worked
by a real Celery worker taking chunks from Redis, on PostgreSQL."""

from __future__ import annotations

import pytest

from evalhub.accounts.actions import do_create_token
from evalhub.celery import QUEUES
from evalhub.celery import app as celery_app
from evalhub.client import Evalhub
from evalhub.client.__main__ import run
from evalhub.home.embedded import worker_thread
from tests.conftest import make_user, requires_redis
from tests.jobs.workers import on_postgres

pytestmark = [requires_redis, on_postgres, pytest.mark.redis, pytest.mark.django_db(transaction=True)]


def test_a_pipeline_starts_a_run_on_a_live_server_and_follows_it_to_its_end(
    live_server,
    demo,
    through_the_broker,
    capsys,  # noqa: F811
):
    token = do_create_token(make_user("ci", "admin"), "CI", "write", 30)[1]
    evalhub = Evalhub(live_server.url, token, timeout=30)
    assert evalhub.me()["roles"] == ["admin"]
    job = evalhub.start(
        "debate",
        name="live",
        benchmark="demo",
        criterion="helpfulness",
        model_a="demo-thorough",
        model_b="demo-terse",
        agents=["heuristic", "heuristic:reference"],
    )
    assert evalhub.job(job["id"])["status"] == "queued"  # nothing works it until a worker takes it
    with worker_thread(celery_app, QUEUES, pool="threads", concurrency=2):
        status = run(["--url", live_server.url, "--token", token, "--quiet", "follow", str(job["id"])])
    assert status == 0, capsys.readouterr().err
    done = evalhub.job(job["id"])
    assert done["status"] == "succeeded" and done["progress_done"] == done["progress_total"] > 0
    assert evalhub.jobs(kind="debate")["count"] == 1


def test_a_large_upload_is_imported_by_a_worker_and_the_client_waits_for_what_it_came_to(
    live_server, through_the_broker, tmp_path, settings
):
    from tests.api.test_imports import GOOD

    settings.EVALHUB_API_INLINE_IMPORT_BYTES = 16  # every file here counts as large
    token = do_create_token(make_user("ci", "admin"), "CI", "write", 30)[1]
    evalhub = Evalhub(live_server.url, token, timeout=30)
    name, text = GOOD["judgments"]
    (tmp_path / name).write_text(text)
    queued = evalhub.upload("judgments", tmp_path / name, wait=False, benchmark="piped", create_models=True)
    assert queued["job"]["status"] == "queued" and queued["imported"] is None  # a worker has not taken it yet
    with worker_thread(celery_app, QUEUES, pool="threads", concurrency=2):
        evalhub.follow(queued["job"]["id"], poll=0.2, progress=False)
    landed = evalhub.uploaded(queued["id"])
    assert landed["benchmark"] == "piped" and landed["rows"] == 1
    with worker_thread(celery_app, QUEUES, pool="threads", concurrency=2):
        again = evalhub.upload("judgments", tmp_path / name, poll=0.2, progress=False, benchmark="piped")
    assert again["rows"] == 1 and again["counts"]["judgments_created"] == 0  # the same file again adds nothing
