"""A large upload is imported by a worker: the request answers 202 with the upload and its job, the job
imports exactly what the request would have imported (or refuses it with the same reasons), a pipeline
reads what it came to, and a worker lost mid-import leaves nothing half written or written twice."""

from __future__ import annotations

import pytest

from evalhub.accounts.actions import do_create_token
from evalhub.api.models import Upload, UploadPart
from evalhub.api.uploads import PART_BYTES, UploadRunner
from evalhub.jobs.chunks import do_resume_job
from evalhub.jobs.models import Job, JobStatus
from evalhub.jobs.runners import work_chunk
from tests.api.test_imports import GOOD, stored, upload
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def token(admin_user) -> str:
    return do_create_token(admin_user, "CI", "write", 30)[1]


def read(client, token: str, upload_id: int):
    return client.get(f"/api/v1/imports/uploads/{upload_id}", headers={"Authorization": f"Bearer {token}"})


@pytest.mark.parametrize("what", list(GOOD))
def test_a_background_upload_lands_what_the_request_lands_and_says_so(
    client, token, what, django_capture_on_commit_callbacks
):
    name, text = GOOD[what]
    assert upload(client, token, what, name, text).status_code == 200
    at_once = stored()
    Upload.objects.all().delete()
    for model in ("judgment", "response", "prompt"):
        Job._meta.apps.get_model("catalog", model).objects.all().delete()

    with django_capture_on_commit_callbacks(execute=True):  # the chunk is queued, and worked, on commit
        answer = upload(client, token, what, name, text, background="true")
    assert answer.status_code == 202, answer.content
    queued = answer.json()
    assert queued["what"] == what and queued["filename"] == name and queued["size"] == len(text.encode())
    assert queued["job"]["kind"] == "upload" and queued["imported"] is None

    assert stored() == at_once
    done = read(client, token, queued["id"]).json()
    assert done["job"]["status"] == "succeeded" and done["job"]["progress_done"] == done["job"]["progress_total"]
    assert done["imported"]["benchmark"] == "piped" and done["imported"]["rows"] == 1 and done["rejected"] is None
    assert not UploadPart.objects.exists()  # the rows are what is kept


def test_a_file_over_the_inline_limit_goes_to_a_worker_unasked(client, token, settings):
    settings.EVALHUB_API_INLINE_IMPORT_BYTES = 10
    name, text = GOOD["judgments"]
    answer = upload(client, token, "judgments", name, text)
    assert answer.status_code == 202
    job = Job.objects.get(pk=answer.json()["job"]["id"])
    assert job.status == JobStatus.QUEUED and stored() == (0, 0, 0)  # nothing until a worker takes it
    assert b"".join(bytes(part.data) for part in UploadPart.objects.order_by("index")) == text.encode()


def test_a_large_file_is_stored_in_parts_and_read_back_whole(client, token, settings, monkeypatch):
    monkeypatch.setattr("evalhub.api.uploads.PART_BYTES", 64)
    name, text = GOOD["benchmark"]
    text += "".join(f"p{i},Question {i}?,maths,alpha,Answer {i}\r\n" for i in range(2, 40))
    answer = upload(client, token, "benchmark", name, text, background="true")
    parts = UploadPart.objects.filter(upload_id=answer.json()["id"]).count()
    assert parts == -(-len(text.encode()) // 64) > 1 and PART_BYTES > 64
    work_chunk(Job.objects.get(pk=answer.json()["job"]["id"]).chunks.get().pk)
    assert read(client, token, answer.json()["id"]).json()["imported"]["rows"] == 39


def test_a_refused_file_fails_its_job_with_the_same_reasons_and_writes_nothing(client, token):
    name, text = GOOD["judgments"]
    answer = upload(client, token, "judgments", name, text.replace("maths", "c" * 101), background="true")
    job = Job.objects.get(pk=answer.json()["job"]["id"])
    work_chunk(job.chunks.get().pk)

    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and stored() == (0, 0, 0)
    assert job.message.startswith("1 problem(s); nothing was imported. First: line 2:")
    refused = read(client, token, answer.json()["id"]).json()["rejected"]
    inline = upload(client, token, "judgments", name, text.replace("maths", "c" * 101)).json()
    assert refused == inline  # as the request answers an import done at once
    assert not UploadPart.objects.exists()
    assert do_resume_job(job).status == JobStatus.FAILED  # refusing the same file again would be all a resume did


def test_the_fields_the_form_refuses_are_refused_in_the_request_and_nothing_is_queued(client, token):
    name, text = GOOD["judgments"]
    answer = upload(client, token, "judgments", name, text, background="true", layout="nonsense")
    assert answer.status_code == 422 and answer.json()["errors"][0]["place"] == "layout"
    assert not Job.objects.exists() and not Upload.objects.exists()


def test_a_worker_lost_after_importing_leaves_the_import_to_run_again_without_doubling(client, token):
    name, text = GOOD["judgments"]
    answer = upload(client, token, "judgments", name, text, background="true")
    chunk = Job.objects.get(pk=answer.json()["job"]["id"]).chunks.get()
    UploadRunner(UploadRunner.load(chunk.job_id)).work(chunk)  # imported, then the worker died unrecorded
    imported = stored()
    assert any(imported) and UploadPart.objects.exists()  # the parts wait for the chunk to be recorded

    assert work_chunk(chunk.pk) == "recorded"  # the chunk sent again
    assert stored() == imported
    assert Job.objects.get(pk=chunk.job_id).status == JobStatus.SUCCEEDED


def test_damaged_parts_fail_the_job_by_name_and_are_kept_for_a_resume(client, token):
    name, text = GOOD["judgments"]
    answer = upload(client, token, "judgments", name, text, background="true")
    job = Job.objects.get(pk=answer.json()["job"]["id"])
    UploadPart.objects.update(data=b"not the file")
    with pytest.raises(Exception, match="stored parts make"):
        work_chunk(job.chunks.get().pk)
    job.refresh_from_db()
    assert job.status == JobStatus.FAILED and "upload the file again" in job.error
    assert stored() == (0, 0, 0) and UploadPart.objects.exists()


def test_an_upload_is_read_by_admins_only(client, token):
    name, text = GOOD["judgments"]
    answer = upload(client, token, "judgments", name, text, background="true")
    reader = do_create_token(make_user("reader", "adjudicator"), "r", "read", 30)[1]
    assert read(client, reader, answer.json()["id"]).status_code == 403
    assert client.get(f"/api/v1/imports/uploads/{answer.json()['id']}").status_code == 401


def test_the_job_page_of_an_upload_lists_what_was_uploaded(client, token, admin_user):
    name, text = GOOD["judgments"]
    answer = upload(client, token, "judgments", name, text, background="true")
    client.force_login(admin_user)
    page = client.get(f"/jobs/{answer.json()['job']['id']}/")
    assert page.status_code == 200
    assert name.encode() in page.content and b"judgments" in page.content


def test_an_upload_the_job_refuses_is_a_422_that_says_why_and_keeps_nothing(client, token, monkeypatch):
    from evalhub.api.uploads import UploadConfig

    monkeypatch.setattr(UploadConfig, "errors", lambda self: ["the import named is not one evalhub has."])
    name, text = GOOD["judgments"]
    answer = upload(client, token, "judgments", name, text, background="true")
    assert answer.status_code == 422
    assert answer.json()["errors"][0]["message"] == "the import named is not one evalhub has."
    assert not Job.objects.exists() and not Upload.objects.exists() and not UploadPart.objects.exists()
