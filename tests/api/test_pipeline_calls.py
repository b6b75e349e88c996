"""What a pipeline does through the API gives what the pages and commands give: a job followed to its
end, paused and resumed by the job page's rules, and the judge lab's report as `judge_report` writes it."""

from __future__ import annotations

import pytest

from evalhub.accounts.actions import do_create_token
from evalhub.jobs.models import JobStatus
from evalhub.jobs.runners import work_chunk
from evalhub.judgelab.report import compute
from evalhub.reads.judged_pairs import Scope
from tests.conftest import make_user
from tests.jobs.test_a_new_kind import WordCountConfig

pytestmark = pytest.mark.django_db


def bearer(text: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {text}"}


def test_a_pipeline_follows_a_job_pauses_it_and_an_admin_token_resumes_it(
    client, word_count, responses, sent, django_capture_on_commit_callbacks
):
    starter = make_user("pipeline", "viewer")
    admin = make_user("boss", "admin")
    job = word_count.create(WordCountConfig(responses), size=3, user=starter, enqueue=False)
    write = do_create_token(starter, "CI", "write", 30)[1]
    followed = client.get(f"/api/v1/jobs/{job.pk}", headers=bearer(write)).json()
    assert (followed["status"], followed["progress_total"], followed["created_by"]) == ("queued", 6, "pipeline")

    paused = client.post(f"/api/v1/jobs/{job.pk}/pause", headers=bearer(write))
    assert paused.status_code == 200 and paused.json()["status"] == JobStatus.PAUSED
    assert client.post(f"/api/v1/jobs/{job.pk}/resume", headers=bearer(write)).status_code == 403

    admin_token = do_create_token(admin, "ops", "admin", 30)[1]
    with django_capture_on_commit_callbacks(execute=True):
        resumed = client.post(f"/api/v1/jobs/{job.pk}/resume", headers=bearer(admin_token))
    assert resumed.status_code == 200 and resumed.json()["status"] == JobStatus.QUEUED
    for chunk in job.chunks.order_by("index"):
        work_chunk(chunk.pk)
    done = client.get(f"/api/v1/jobs/{job.pk}", headers=bearer(write)).json()
    assert (done["status"], done["finished"], done["percent"], done["progress_done"]) == ("succeeded", True, 100, 6)
    listed = client.get("/api/v1/jobs", {"status": "succeeded"}, headers=bearer(write)).json()
    assert [item["id"] for item in listed["items"]] == [job.pk] and listed["count"] == 1


def test_the_judge_lab_through_the_api_is_the_reports_json(client, arena):
    math = [arena.debate("alpha", "beta", verdict=v) for v in (1, 1, 2, 0, 1)]
    arena.judge("openai:gpt-judge", {d: [d.verdict if i else 2] for i, d in enumerate(math)})
    token = do_create_token(make_user("reader", "viewer"), "CI", "read", 30)[1]
    answer = client.get("/api/v1/judge-lab", headers=bearer(token)).json()
    assert answer["current"] and answer["computed_at"] is not None
    assert answer["report"] == compute(Scope()).as_json()
    assert answer["report"]["judges"] and answer["report"]["judges"][0]["n"] == 5
    unknown = client.get("/api/v1/judge-lab", {"estimator": "nonesuch"}, headers=bearer(token))
    assert unknown.status_code == 422 and "unknown estimator" in unknown.json()["detail"]
    adjudicator = do_create_token(make_user("blind", "adjudicator"), "CI", "read", 30)[1]
    assert client.get("/api/v1/judge-lab", headers=bearer(adjudicator)).status_code == 403
