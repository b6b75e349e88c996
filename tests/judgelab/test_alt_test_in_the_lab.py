"""The judge lab runs the alternative annotator test on the people's and the judges' verdicts: its
counts are the core procedure's on the same labels, a judge that copies the people's majority passes and
a coin does not, and the page, its JSON export and the API give the test at the epsilon asked for."""

from __future__ import annotations

import json
import random

import pytest

from evalhub.accounts.actions import do_create_token
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.core.statistics.alt_test import outcomes
from evalhub.judgelab.report import compute, judge_key
from evalhub.reads.judged_pairs import Scope
from tests.conftest import make_user

pytestmark = pytest.mark.django_db
PEOPLE = [f"human-{n}" for n in range(4)]


@pytest.fixture
def labelled():
    """40 pairs, four people (each wrong a third of the time), a judge copying their majority, a coin."""
    rng = random.Random(7)
    rows = ["prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner"]
    given: dict[str, dict[str, str]] = {person: {} for person in PEOPLE}
    judges: dict[str, dict[str, str]] = {"copycat": {}, "coin": {}}
    for n in range(40):
        truth = rng.choice("ab")
        for person in PEOPLE:
            given[person][f"q{n}"] = rng.choice("ab") if rng.random() < 0.33 else truth
        votes = [given[p][f"q{n}"] for p in PEOPLE]
        judges["copycat"][f"q{n}"] = max("ab", key=votes.count)
        judges["coin"][f"q{n}"] = rng.choice("ab")
        for rater, labels in [*given.items(), *judges.items()]:
            rows.append(f"q{n},Question {n}?,alpha,beta,Answer A{n},Answer B{n},{rater},{labels[f'q{n}']}")
    text = "\r\n".join(rows) + "\r\n"
    do_import_judgments(filename="l.csv", data=text.encode(), benchmark_slug="study", allow_new_models=True)
    return given, judges


def report_of(judge: str):
    return next(r for r in compute(Scope()).judges if r.judge.id == judge)


def test_the_labs_counts_are_the_core_procedures_on_the_same_labels(labelled):
    given, judges = labelled
    for judge in ("copycat", "coin"):
        expected = outcomes(given, judges[judge])
        assert report_of(judge).alt_outcomes == {person: list(counts) for person, counts in expected.items()}


def test_the_majority_copier_passes_and_the_coin_does_not(labelled):
    assert report_of("copycat").alt_test(0.1).passes
    coin = report_of("coin").alt_test(0.0)
    assert not coin.passes and coin.verdict == "may not replace these people at ε = 0"
    assert report_of("human-0").alt_outcomes == {}  # a person is not tested against the others


def test_the_page_the_export_and_the_api_give_the_test_at_the_epsilon_asked_for(labelled, client):
    client.force_login(make_user("vi", "viewer"))
    key = judge_key("copycat")
    page = client.get(f"/judges/{key}/", {"epsilon": "0.1"}).content.decode()
    assert "May it replace these people?" in page and "May replace these people at ε = 0.1" in page
    assert '<option value="0.1" selected>' in page
    exported = json.loads(client.get(f"/judges/{key}.json", {"epsilon": "0.15"}).content)
    assert exported["alt_test"]["epsilon"] == 0.15 and exported["alt_test"]["fdr"] == "Benjamini–Yekutieli"
    assert [p["person"] for p in exported["alt_test"]["people"]] == PEOPLE
    token = do_create_token(make_user("ci", "viewer"), "CI", "read", 30)[1]
    api = client.get("/api/v1/judge-lab", {"epsilon": "0.1"}, headers={"Authorization": f"Bearer {token}"}).json()
    copycat = next(j for j in api["report"]["judges"] if j["id"] == "copycat")
    assert copycat["alt_test"]["epsilon"] == 0.1 and copycat["alt_test"]["passes"]


def test_the_command_writes_the_test_at_its_epsilon(labelled, tmp_path):
    from django.core.management import call_command

    call_command("judge_report", "--epsilon", "0.1", "--out", str(tmp_path / "r.json"))
    written = json.loads((tmp_path / "r.json").read_text())
    copycat = next(j for j in written["judges"] if j["id"] == "copycat")
    assert copycat["alt_test"]["epsilon"] == 0.1 and copycat["alt_test"]["verdict"].startswith("may replace")


def test_pointwise_scores_get_the_test_with_numeric_alignment(client):
    from evalhub.catalog.actions.scores import check_score_file, do_import_scores

    rng = random.Random(3)
    rows = ["prompt_id,prompt,model,response,rater,score"]
    for n in range(30):
        for model in ("alpha", "beta"):
            truth = rng.randint(1, 5)
            people = {f"human-{k}": min(5, max(1, truth + rng.choice((-1, 0, 0, 1)))) for k in range(3)}
            close = round(sum(people.values()) / 3)
            for rater, score in [*people.items(), ("close-judge", close), ("far-judge", 6 - truth)]:
                rows.append(f"q{n},Q{n}?,{model},Answer {n}{model},{rater},{score}")
    data = ("\r\n".join(rows) + "\r\n").encode()
    parsed = check_score_file("s.csv", data, allow_new_models=True, benchmark_slug="rated")
    do_import_scores(parsed=parsed, filename="s.csv", data=data, benchmark_slug="rated")
    client.force_login(make_user("vi", "viewer"))
    page = client.get("/judges/pointwise/", {"benchmark": "rated", "epsilon": "0.1"}).content.decode()
    assert "alt-test, ε = 0.1" in page and "May replace these people at ε = 0.1".lower() in page.lower()
    report = json.loads(client.get("/judges/pointwise.json", {"benchmark": "rated", "epsilon": "0.1"}).content)
    judges = next(iter(report["criteria"].values()))["judges"]
    assert judges["close-judge"]["alt_test"]["passes"] and not judges["far-judge"]["alt_test"]["passes"]
