"""The scores import page: a score file or Inspect logs (one log, or a zipped eval-set folder) uploaded
in the browser, all or nothing, then shown on the pointwise page."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from evalhub.catalog.models import Judgment, Prompt
from tests.catalog.test_import_scores import inspect_log

pytestmark = pytest.mark.django_db

PEOPLE_CSV = (
    "prompt_id,prompt,model,response,rater,criterion,score,scale\r\n"
    + "".join(
        f"arithmetic/{i},Question {i}?,mockllm-model,Answer to {i},human-ana,match,{i % 2},0-1\r\n" for i in (1, 2)
    )
).encode()


def eval_set_zip(tmp_path, *, extra: dict[str, bytes] | None = None) -> bytes:
    logs = tmp_path / "logs"
    logs.mkdir()
    for task in ("arithmetic", "trivia"):
        inspect_log(logs / f"{task}.eval", {1: {"match": "C"}, 2: {"match": "I"}}, task=task)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for log in sorted(logs.iterdir()):
            archive.write(log, f"eval-set/{log.name}")
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return buffer.getvalue()


def upload(client, name: str, data: bytes, benchmark: str = "set", *, press: str = "import"):
    """The page's form posted with the file: `press` "import" (new models allowed) or "preview"."""
    pressed = {"create_models": "on"} if press == "import" else {"preview": "1"}
    form = {"file": SimpleUploadedFile(name, data), "benchmark": benchmark, "task_type": "other", **pressed}
    return client.post("/judges/import-scores/", form)


def test_a_zipped_eval_set_imports_every_task_and_the_pointwise_page_shows_its_scorers(tmp_path, admin_user, login):
    client = login(admin_user)
    assert upload(client, "people.csv", PEOPLE_CSV).status_code == 302
    response = upload(client, "eval-set.zip", eval_set_zip(tmp_path))
    assert response.status_code == 302 and response["Location"] == "/judges/pointwise/?benchmark=set"
    assert set(Prompt.objects.values_list("external_id", flat=True)) == {
        "arithmetic/1",
        "arithmetic/2",
        "trivia/1",
        "trivia/2",
    }
    page = client.get(response["Location"])
    html = page.content.decode()
    assert "Imported eval-set.zip" in html and 'href="/judges/pointwise/?benchmark=set"' in html
    assert "the rating screen" not in html, "an admin who does not adjudicate would meet a 403 there"
    section = html[html.index('id="criterion-match"') :]
    assert "<td>match</td>" in section and "1 person scored 2 responses" in section


def test_one_eval_log_imports_and_a_second_upload_changes_nothing(tmp_path, admin_user, login):
    inspect_log(tmp_path / "run.eval", {"q1": {"match": "C"}, "q2": {"match": 0.5}})
    client = login(admin_user)
    data = (tmp_path / "run.eval").read_bytes()
    assert upload(client, "run.eval", data).status_code == 302
    assert upload(client, "run.eval", data).status_code == 302
    assert sorted(Judgment.objects.values_list("score", flat=True)) == [0.5, 1.0]


def test_a_zip_whose_member_would_land_outside_its_folder_is_refused_and_writes_nothing(tmp_path, admin_user, login):
    client = login(admin_user)
    response = upload(client, "sneaky.zip", eval_set_zip(tmp_path, extra={"../../outside.json": b"{}"}))
    assert response.status_code == 400
    assert "would be written outside the folder" in response.content.decode()
    assert not Judgment.objects.exists() and not Prompt.objects.exists()


def test_a_bad_score_file_names_its_rows_and_a_zip_with_no_log_says_so(tmp_path, admin_user, login):
    client = login(admin_user)
    bad = PEOPLE_CSV.replace(b",0,0-1", b",7,0-1")
    response = upload(client, "people.csv", bad)
    assert response.status_code == 400 and "score 7 is outside its scale 0-1" in response.content.decode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("notes.txt", "no logs here")
    response = upload(client, "notes.zip", buffer.getvalue())
    assert response.status_code == 400 and "holds no Inspect log" in response.content.decode()
    assert not Judgment.objects.exists()


@pytest.mark.parametrize("role", ["viewer", "adjudicator", "outsider"])
def test_only_admins_import_scores(role, request, login):
    client = login(request.getfixturevalue(role))
    assert client.get("/judges/import-scores/").status_code == 403
    assert upload(client, "people.csv", PEOPLE_CSV).status_code == 403
    assert not Judgment.objects.exists()


def test_a_json_log_cut_short_is_refused_with_its_reason_and_stores_nothing(tmp_path, admin_user, login):
    """Read a sample at a time, a `.json` log cut short fails after its first samples were read: the page
    names where (after the last sample read whole; it named that sample) and stores none of them."""
    inspect_log(tmp_path / "run.json", {f"q{i}": {"match": "C"} for i in range(6)}, transcript=2_000)
    data = (tmp_path / "run.json").read_bytes()
    cut = data[: data.index(b'"q4"')]
    client = login(admin_user)
    response = upload(client, "run.json", cut)
    assert response.status_code == 400
    assert "run.json, after sample q3: not an Inspect log Inspect can read" in response.content.decode()
    assert not Judgment.objects.exists() and not Prompt.objects.exists()
    assert upload(client, "run.json", data).status_code == 302
    assert Judgment.objects.count() == 6


def test_an_adjudicating_admin_is_linked_to_the_rating_screen_with_the_benchmark_chosen(tmp_path, login):
    from tests.conftest import make_user

    client = login(make_user("ida-rates", "admin", "adjudicator"))
    response = upload(client, "people.csv", PEOPLE_CSV)
    html = client.get(response["Location"]).content.decode()
    assert '<a href="/adjudicate/rate/?benchmark=set">the rating screen</a>' in html
    chooser = client.get("/adjudicate/rate/?benchmark=set")
    assert chooser.status_code == 200, "half a choice is no error"
    page = chooser.content.decode()
    assert '<option value="set" selected>' in page
    assert "This field is required" not in page


def test_the_scores_page_previews_the_first_rows_as_read_and_writes_nothing(tmp_path, admin_user, login):
    """The judgments page previewed a file; the scores page imported it blind."""
    client = login(admin_user)
    assert upload(client, "people.csv", PEOPLE_CSV).status_code == 302  # the benchmark holds two responses
    stored = Judgment.objects.count()
    base = {"model": "mockllm-model", "rater": "gpt-judge", "criterion": "match", "scale": "0-1"}
    rows = [
        {**base, "prompt_id": "arithmetic/1", "score": 1, "rationale": "Right."},  # held: named, not repeated
        {**base, "prompt_id": "arithmetic/9", "score": 1},  # not held
        {**base, "prompt_id": "arithmetic/2", "response": "", "score": 7},  # an empty answer, out of scale
        {**base, "prompt_id": "arithmetic/2", "response": "Answer to 2", "rater": "human-bo", "score": "x"},
    ]
    scores = "\n".join(json.dumps(row) for row in rows).encode()
    page = upload(client, "scores.jsonl", scores, press="preview")
    html = page.content.decode()
    assert page.status_code == 200 and 'id="import-preview"' in html
    shown = html[html.index('id="import-preview"') :]
    assert "The first rows as they would be imported (jsonl)" in shown
    rows = shown.split("<tr>")[2:]
    assert "(not given: the benchmark&#x27;s)" in rows[0] and "<td>model</td>" in rows[0] and "Right." in rows[0]
    assert "(not given; the benchmark holds none)" in rows[1]
    assert "(empty answer)" in rows[2] and "score 7 is outside its scale 0-1." in rows[2]
    assert "&#x27;score&#x27; must be a number, not &#x27;x&#x27;." in rows[3]
    assert Judgment.objects.count() == stored, "a preview writes nothing"

    logs = upload(client, "eval-set.zip", eval_set_zip(tmp_path), press="preview").content.decode()
    assert "(Inspect logs)" in logs and "arithmetic.eval, sample 1" in logs and "<td>match</td>" in logs
    assert Judgment.objects.count() == stored
