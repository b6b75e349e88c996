"""The judge lab's corrected boards by the estimator one asks for: the page, the leaderboard's section
and the exports say which produced each board and why, and numbers equal the core fit called by hand."""

from __future__ import annotations

import csv
import io
import json

import pytest

from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.core.statistics.estimators import CLASSICAL, MULTI_JUDGE, PPI
from evalhub.judgelab.report import judge_key
from tests.dashboards.test_baseline_win_rates import JUDGE, imported  # noqa: F401  (fixture)
from tests.dashboards.test_corrected_win_rates import LABELLED, judged_and_labelled, people_label  # noqa: F401

pytestmark = pytest.mark.django_db
SECOND_JUDGE = "second_judge"


@pytest.fixture
def two_judges(judged_and_labelled):  # noqa: F811
    """People label both models' battles; a second judge judges every battle the first judged, leaning
    the other way now and then."""
    files, _ = judged_and_labelled
    more = people_label(files["phi-2"], LABELLED)
    do_import_judgments(filename="people-2.json", data=json.dumps(more).encode(), benchmark_slug="ae")
    for name, records in files.items():
        other = [
            {**r, "annotator": SECOND_JUDGE, "preference": 1.0 if i % 3 == 0 else r["preference"]}
            for i, r in enumerate(records)
        ]
        do_import_judgments(filename=f"second-{name}.json", data=json.dumps(other).encode(), benchmark_slug="ae")
    return files


def board_json(client, estimator: str = "") -> dict:
    query = {"estimator": estimator} if estimator else {}
    exported = json.loads(client.get("/judges/report.json", query).content)
    return next(judge for judge in exported["judges"] if judge["id"] == JUDGE)["corrected_ratings"]


def test_each_estimator_is_named_on_the_board_and_people_alone_is_the_people_column(two_judges, login, viewer):
    client = login(viewer)
    default = board_json(client)
    assert default["estimator"] == PPI and default["estimator_reason"] == "one judge, one weight for every pair"
    alone = board_json(client, CLASSICAL)
    assert alone["estimator"] == CLASSICAL and alone["judge_weight"] == 0.0
    for rating in alone["ratings"]:
        assert rating["corrected"] == pytest.approx(rating["people"], abs=1e-9)
    several = board_json(client, MULTI_JUDGE)
    assert several["estimator"] == MULTI_JUDGE and several["judges_combined"] == 2
    assert several["estimator_reason"] == "2 judges judged every one of these pairs: their corrections combined"
    assert [r["people"] for r in several["ratings"]] == pytest.approx([r["people"] for r in default["ratings"]])
    assert [r["corrected"] for r in several["ratings"]] != pytest.approx([r["corrected"] for r in default["ratings"]])

    page = client.get(f"/judges/{judge_key(JUDGE)}/", {"estimator": MULTI_JUDGE}).content.decode()
    assert "Corrected by <strong>several judges (multi-judge PPI)</strong>, 2 judges combined" in page
    assert '<option value="multi-judge" selected>' in page


def test_an_unknown_estimator_is_said_escaped_and_the_default_shown(two_judges, login, viewer):
    client = login(viewer)
    page = client.get(f"/judges/{judge_key(JUDGE)}/", {"estimator": "<b>x</b>"}).content.decode()
    assert "unknown estimator: chosen by evalhub" in page
    assert "<b>x</b>" not in page
    assert "Corrected by <strong>PPI++</strong>" in page


def test_the_corrected_boards_export_has_a_row_per_judge_and_model_equal_to_the_json(two_judges, login, viewer):
    client = login(viewer)
    response = client.get("/judges/corrected-boards.csv", {"benchmark": "ae", "kind": "model"})
    assert response.status_code == 200
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    mine = [row for row in rows if row["judge"] == JUDGE]
    assert {row["judge"] for row in rows} == {JUDGE, SECOND_JUDGE}, "every LLM judge, no person"
    exported = board_json(client)
    assert len(mine) == len(exported["ratings"]) == 3
    for row, rating in zip(mine, exported["ratings"], strict=True):
        assert row["model"] == rating["model"] and row["estimator"] == PPI
        assert float(row["judge_rating"]) == pytest.approx(rating["judge"], abs=1e-9)
        for column in ("corrected_low", "corrected", "corrected_high", "people_low", "people_high"):
            assert float(row[column]) == pytest.approx(rating[column], abs=1e-9), column
    section = client.get("/judges/corrected-boards/", {"benchmark": "ae", "kind": "model"}).content.decode()
    assert "/judges/corrected-boards.csv?benchmark=ae&amp;kind=model" in section
    assert 'name="estimator"' in section and 'hx-target="#corrected-boards"' in section
    several = client.get("/judges/corrected-boards.json", {"benchmark": "ae", "estimator": MULTI_JUDGE})
    assert {row["estimator"] for row in json.loads(several.content)} == {MULTI_JUDGE}


def test_a_corrected_boards_csv_of_no_board_still_has_its_header(login, viewer):
    """A spreadsheet or script reading the export by column name found an empty file where no judge had
    a board yet."""
    response = login(viewer).get("/judges/corrected-boards.csv")
    assert response.status_code == 200
    reader = csv.DictReader(io.StringIO(response.content.decode()))
    assert list(reader) == []
    assert reader.fieldnames is not None
    assert {"judge", "estimator", "model", "judge_rating", "corrected", "people_low"} <= set(reader.fieldnames)
