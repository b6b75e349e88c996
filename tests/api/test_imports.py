"""Uploads through the API are the import pages' uploads: the same files land the same rows, a bad row
is named the same way and nothing is written, and a field the form refuses is a 422 that says which."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from evalhub.accounts.actions import do_create_token
from evalhub.catalog.models import Judgment, Prompt, Response
from tests.catalog.test_hostile_uploads import BENCHMARK_CSV, LABELS_CSV, SCORES_CSV, post

pytestmark = pytest.mark.django_db

GOOD = {
    "benchmark": ("bench.csv", BENCHMARK_CSV.replace("c" * 101, "maths")),
    "judgments": ("labels.csv", LABELS_CSV.replace("c" * 101, "maths")),
    "scores": ("scores.csv", SCORES_CSV.replace("c" * 101, "maths")),
}
PAGES = {"benchmark": "/benchmarks/import/", "judgments": "/judges/import/", "scores": "/judges/import-scores/"}


def upload(client, token: str, what: str, name: str, text: str, **fields):
    body = {"file": SimpleUploadedFile(name, text.encode()), "benchmark": "piped", "create_models": "true", **fields}
    return client.post(f"/api/v1/imports/{what}", body, headers={"Authorization": f"Bearer {token}"})


def stored() -> tuple[int, ...]:
    return Prompt.objects.count(), Response.objects.count(), Judgment.objects.count()  # scores are judgments


@pytest.mark.parametrize("what", list(GOOD))
def test_an_upload_through_the_api_lands_what_the_page_lands(client, admin_user, login, what):
    token = do_create_token(admin_user, "CI", "write", 30)[1]
    name, text = GOOD[what]
    answer = upload(client, token, what, name, text)
    assert answer.status_code == 200, answer.content
    through_api = stored()
    assert answer.json()["benchmark"] == "piped" and answer.json()["rows"] == 1 and any(through_api)
    again = upload(client, token, what, name, text)  # the same file again changes nothing
    assert again.status_code == 200 and stored() == through_api

    for model in (Judgment, Response, Prompt):
        model.objects.all().delete()
    page = post(login(admin_user), PAGES[what], name, text.encode())
    assert page.status_code == 302
    assert stored() == through_api


@pytest.mark.parametrize("what", list(GOOD))
def test_a_bad_row_is_named_and_nothing_is_written(client, admin_user, what):
    token = do_create_token(admin_user, "CI", "write", 30)[1]
    name, text = GOOD[what]
    answer = upload(client, token, what, name, text.replace("maths", "c" * 101))
    assert answer.status_code == 422
    body = answer.json()
    assert body["detail"] == "1 problem(s); nothing was imported." and body["error_count"] == 1
    assert body["errors"][0]["line"] == 2 and "'category' is longer than 100" in body["errors"][0]["message"]
    assert stored() == (0, 0, 0)


def test_a_field_the_import_form_refuses_is_a_422_naming_it(client, admin_user):
    token = do_create_token(admin_user, "CI", "write", 30)[1]
    answer = upload(client, token, "benchmark", *GOOD["benchmark"], benchmark="not a slug!")
    assert answer.status_code == 422
    assert answer.json()["errors"][0]["place"] == "benchmark"
    assert stored() == (0, 0, 0)


def test_a_file_past_the_size_limit_is_refused_unread(client, admin_user, settings):
    settings.EVALHUB_MAX_IMPORT_BYTES = 10
    token = do_create_token(admin_user, "CI", "write", 30)[1]
    answer = upload(client, token, "benchmark", *GOOD["benchmark"])
    assert answer.status_code == 422 and "over the import limit" in answer.json()["errors"][0]["message"]
