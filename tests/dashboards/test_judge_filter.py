"""Every board filters to one judge (issue 81): the pairwise board, its exports and a model's page
count that judge's (or person's) verdicts only, whatever source they came from, equal to the board of a
database that holds nothing else; the judge picker groups people apart from model judges."""

from __future__ import annotations

import csv
import io

import pytest

from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.dashboards.pairwise import pairwise_board
from evalhub.reads.battles import SOURCES, Filters, battle_judges
from evalhub.reads.caching import fingerprint

pytestmark = pytest.mark.django_db

# (prompt, model a, model b, judge, human, winner): two people and two model judges, one pair labelled by all.
LABELS = [
    ("p1", "alpha", "beta", "human-ana", True, "a"),
    ("p1", "alpha", "beta", "human-bo", True, "b"),
    ("p1", "alpha", "beta", "gpt-judge", False, "a"),
    ("p1", "alpha", "beta", "claude-judge", False, "tie"),
    ("p2", "beta", "gamma", "human-ana", True, "a"),
    ("p2", "beta", "gamma", "gpt-judge", False, "b"),
    ("p3", "gamma", "alpha", "gpt-judge", False, "b"),
    ("p3", "gamma", "alpha", "human-bo", True, "a"),
    ("p4", "alpha", "gamma", "claude-judge", False, "a"),
]


def labels_csv(rows) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(
        ["prompt_id", "prompt", "model_a", "model_b", "response_a", "response_b", "judge", "judge_kind", "winner"]
    )
    for prompt, a, b, judge, human, winner in rows:
        kind = "human" if human else "model"
        writer.writerow(
            [prompt, f"Question {prompt}?", a, b, f"{a} on {prompt}", f"{b} on {prompt}", judge, kind, winner]
        )
    return out.getvalue().encode()


def imported(rows, benchmark: str = "study") -> None:
    do_import_judgments(filename="l.csv", data=labels_csv(rows), benchmark_slug=benchmark, allow_new_models=True)


def cells(board) -> dict[tuple[str, str], tuple[int, int, int]]:
    return {
        (row["model"], cell["opponent"]): (cell["wins"], cell["losses"], cell["ties"])
        for row in board["matrix"]
        for cell in row["cells"]
        if cell["games"]
    }


@pytest.mark.parametrize("judge", ["gpt-judge", "human-bo", "claude-judge"])
def test_a_board_of_one_judge_equals_the_board_of_its_labels_alone(judge):
    imported(LABELS)
    everything = Filters(sources=tuple(SOURCES), judge=judge)
    filtered = pairwise_board(everything, fingerprint())
    assert filtered["battles"] == sum(1 for row in LABELS if row[3] == judge)
    expected = {}
    for _, a, b, who, _, winner in LABELS:
        if who == judge:
            expected.setdefault((a, b), [0, 0, 0])[("a", "b", "tie").index(winner)] += 1
    for (a, b), (won, lost, tied) in expected.items():
        assert cells(filtered)[(a, b)] == (won, lost, tied)
        assert cells(filtered)[(b, a)] == (lost, won, tied)
    # The same figures as a database holding that judge's labels only.
    alone = [row for row in LABELS if row[3] == judge]
    imported(alone, benchmark="alone")
    only = pairwise_board(Filters(sources=tuple(SOURCES), benchmark="alone"), fingerprint())
    assert [r["model"] for r in only["ratings"]] == [r["model"] for r in filtered["ratings"]]
    assert [round(r["rating"], 6) for r in only["ratings"]] == [round(r["rating"], 6) for r in filtered["ratings"]]


def test_the_picker_groups_model_judges_apart_from_people():
    imported(LABELS)
    assert battle_judges() == [
        ("Model judges (imported)", [("claude-judge", "claude-judge"), ("gpt-judge", "gpt-judge")]),
        ("People (imported)", [("human-ana", "human-ana"), ("human-bo", "human-bo")]),
    ]


def test_the_page_its_exports_and_a_model_page_take_the_judge_filter(client, viewer, login):
    imported(LABELS)
    client = login(viewer)
    page = client.get("/leaderboards/?judge=gpt-judge").content.decode()
    assert '<optgroup label="People (imported)">' in page
    assert '<option value="gpt-judge" selected>' in page
    assert "3 battles (Imported judge verdicts: 3)" in page, "no source ticked: the judge's, wherever from"
    rows = list(csv.DictReader(io.StringIO(client.get("/leaderboards/ratings.csv?judge=gpt-judge").content.decode())))
    assert {row["model"] for row in rows} == {"alpha", "beta", "gamma"}
    battles = client.get("/leaderboards/battles.jsonl?judge=human-ana").content.decode().splitlines()
    assert len(battles) == 2
    model = client.get("/models/alpha/?judge=claude-judge&benchmark=study").content.decode()
    form = model[model.index('id="candidate-filters"') : model.index("</form>", model.index('id="candidate-filters"'))]
    assert '<option value="claude-judge" selected>' in form and 'name="source"' in form
    assert '<input type="hidden" name="benchmark" value="study">' in form, "the page's other filters are kept"
    record = client.get("/models/alpha/record.csv?judge=claude-judge").content.decode()
    rows = {row["opponent"]: row for row in csv.DictReader(io.StringIO(record))}
    assert set(rows) == {"beta", "gamma"}
    assert (rows["beta"]["wins"], rows["beta"]["ties"], rows["gamma"]["wins"]) == ("0", "1", "1")
