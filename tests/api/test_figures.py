"""The figures through the API are the pages' exports of the same data: the leaderboard under the same
filters, a judge's versions, and the pointwise report."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from evalhub.accounts.actions import do_create_token
from evalhub.alignment.actions import do_create_judge
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.core.alignment.versions import JudgeDefinition
from tests.api.test_imports import GOOD
from tests.conftest import make_user
from tests.dashboards.test_judge_filter import LABELS, imported

pytestmark = pytest.mark.django_db


@pytest.fixture
def reader(client):
    token = do_create_token(make_user("reader", "viewer"), "CI", "read", 30)[1]
    return lambda path, **query: client.get(f"/api/v1{path}", query, headers={"Authorization": f"Bearer {token}"})


def test_the_leaderboard_is_the_pages_export_under_the_same_filters(reader, client, viewer, login):
    imported(LABELS)
    answer = reader("/leaderboard", judge="gpt-judge")
    assert answer.status_code == 200 and answer.json()["current"]
    page = login(viewer).get("/leaderboards/ratings.csv?judge=gpt-judge").content.decode()
    exported = list(csv.DictReader(io.StringIO(page)))
    assert [row["model"] for row in answer.json()["rows"]] == [row["model"] for row in exported]
    assert [round(row["rating"], 6) for row in answer.json()["rows"]] == [
        round(float(r["rating"]), 6) for r in exported
    ]
    matrix = reader("/leaderboard", judge="gpt-judge", table="win_rates").json()["rows"]
    assert {(cell["model"], cell["opponent"]) for cell in matrix} >= {("alpha", "beta"), ("beta", "alpha")}
    assert reader("/leaderboard", source="nonesuch").status_code == 422


def test_a_judges_versions_are_the_pages_json(reader, login, viewer):
    do_create_judge("detail", JudgeDefinition(spec="heuristic:detail"))
    answer = reader("/judge-versions/detail")
    assert answer.status_code == 200
    assert answer.json() == json.loads(login(viewer).get("/judge-versions/detail.json").content)
    assert reader("/judge-versions/nobody").status_code == 404


def test_the_pointwise_report_is_the_pages_json(reader, client, admin_user, login):
    name, text = GOOD["scores"]
    more = "".join(f"p{n},Question {n}?,maths,alpha,A{n},human-ann,{1 + n % 5}\r\n" for n in range(2, 9))
    upload = SimpleUploadedFile(name, (text + more).encode())
    form = {"file": upload, "benchmark": "piped", "task_type": "other", "create_models": "on"}
    assert login(admin_user).post("/judges/import-scores/", form).status_code == 302
    answer = reader("/pointwise", benchmark="piped")
    assert answer.status_code == 200
    assert answer.json() == json.loads(client.get("/judges/pointwise.json?benchmark=piped").content)
    assert reader("/pointwise", benchmark="nowhere").status_code == 404


def test_an_export_table_is_the_benchmark_pages_download(reader, client, admin_user, login):
    name, text = GOOD["benchmark"]
    form = {"file": SimpleUploadedFile(name, text.encode()), "benchmark": "piped", "task_type": "other"}
    form["create_models"] = "on"
    assert login(admin_user).post("/benchmarks/import/", form).status_code == 302
    for fmt in ("jsonl", "csv"):
        answer = reader("/benchmarks/piped/export/responses", format=fmt)
        page = client.get(f"/benchmarks/piped/export/responses.{fmt}")
        assert answer.status_code == 200 and answer.content == page.content and answer.content
        assert answer["Content-Disposition"] == page["Content-Disposition"]
    assert reader("/benchmarks/piped/export/nonesuch").status_code == 404
    assert reader("/benchmarks/piped/export/responses", format="xls").status_code == 422


def test_win_rates_are_export_winrates_numbers_and_an_unjudged_baseline_is_a_404(reader, tmp_path):
    from tests.dashboards.test_baseline_win_rates import BASELINE, JUDGE, annotations, export

    for name, seed in (("claude-2.1", 1), ("phi-2", 2)):
        records = json.dumps(annotations(name, 40, seed)).encode()
        do_import_judgments(filename=f"{name}.json", data=records, benchmark_slug="ae", allow_new_models=True)
    answer = reader("/win-rates", benchmark="ae", judge=JUDGE, baseline=BASELINE)
    assert answer.status_code == 200 and answer.json()["current"]
    exported = export(tmp_path)
    rows = {row["name"]: row for row in answer.json()["rows"]}
    assert set(rows) == set(exported) == {"claude-2.1", "phi-2"}
    for name, row in rows.items():
        for column in ("win_rate", "standard_error", "length_controlled_winrate", "n_total"):
            assert row[column] == pytest.approx(float(exported[name][column]), abs=1e-9), column
    # A baseline the judge never faced, or a judge that judged nothing, is not answered with another board.
    assert reader("/win-rates", benchmark="ae", judge=JUDGE, baseline="nobody").status_code == 404
    assert reader("/win-rates", benchmark="ae", judge="nobody", baseline=BASELINE).status_code == 404
