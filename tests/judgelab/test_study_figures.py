"""The figures a judge study publishes, on the page and in exports: the people's pairwise κ table (every
two people's Cohen's κ on the pairs both judged, with that n, equal to scikit-learn's, in name order
whatever the order the labels came in) and each judge's agreement with its interval."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.judgelab.report import judge_lab_report

pytestmark = pytest.mark.django_db

PEOPLE = ("human-cy", "human-ana", "human-bo")
WINNERS = ("a", "b", "tie")


def labels(seed: int, pairs: int = 30) -> tuple[str, dict[str, dict[str, str]]]:
    """A CSV where three people label overlapping pairs (human-bo skips every fourth) and a judge labels all."""
    rng = np.random.default_rng(seed)
    rows = ["prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner"]
    given: dict[str, dict[str, str]] = {person: {} for person in PEOPLE}
    for k in range(pairs):
        truth = WINNERS[rng.integers(3)]
        base = f"q{k},Question {k}?,gpt-4o,llama-3,Answer A {k},Answer B {k}"
        for person in PEOPLE:
            if person == "human-bo" and k % 4 == 0:
                continue
            said = truth if rng.uniform() < 0.75 else WINNERS[rng.integers(3)]
            given[person][f"q{k}"] = said
            rows.append(f"{base},{person},{said}")
        rows.append(f"{base},gpt-4o,{truth}")
    return "\r\n".join(rows) + "\r\n", given


@pytest.mark.parametrize("seed", [0, 1])
def test_every_two_peoples_kappa_is_scikit_learns_on_the_pairs_both_judged(seed):
    text, given = labels(seed)
    do_import_judgments(filename="l.csv", data=text.encode(), benchmark_slug="study", allow_new_models=True)
    table = judge_lab_report().people.pairwise
    assert [(pair.first, pair.second) for pair in table] == [
        ("human-ana", "human-bo"),
        ("human-ana", "human-cy"),
        ("human-bo", "human-cy"),
    ], "every two people, in name order"
    for pair in table:
        shared = sorted(set(given[pair.first]) & set(given[pair.second]))
        expected = cohen_kappa_score([given[pair.first][q] for q in shared], [given[pair.second][q] for q in shared])
        assert pair.pairs == len(shared)
        assert pair.kappa == pytest.approx(expected, abs=1e-12)


def test_the_judge_list_shows_the_pairwise_table(login, viewer):
    text, _ = labels(0)
    do_import_judgments(filename="l.csv", data=text.encode(), benchmark_slug="study", allow_new_models=True)
    html = login(viewer).get("/judges/").content.decode()
    table = html[html.index('id="people-pairwise-kappa"') :]
    assert "human-ana</td><td>human-bo" in table and "Cohen" in html


def test_the_judge_list_and_its_csv_give_each_judges_agreement_with_its_interval(login, viewer):
    import csv
    import io

    text, _ = labels(0)
    do_import_judgments(filename="l.csv", data=text.encode(), benchmark_slug="study", allow_new_models=True)
    judge = next(r for r in judge_lab_report().judges if r.judge.id == "gpt-4o")
    assert judge.agreement.low is not None and judge.agreement.low < judge.agreement.value < judge.agreement.high
    client = login(viewer)
    html = client.get("/judges/").content.decode()
    assert f"[{judge.agreement.low:.2f}, {judge.agreement.high:.2f}]" in html
    rows = {row["judge"]: row for row in csv.DictReader(io.StringIO(client.get("/judges/report.csv").content.decode()))}
    assert float(rows["gpt-4o"]["agreement_low"]) == pytest.approx(judge.agreement.low)
    assert float(rows["gpt-4o"]["agreement_high"]) == pytest.approx(judge.agreement.high)


def test_each_judges_precision_recall_and_f1_per_verdict_are_scikit_learns_with_intervals(login, viewer):
    from sklearn.metrics import precision_recall_fscore_support

    from evalhub.core.judge_lab.measures import FIRST, SECOND, TIE

    text, given = labels(1)
    do_import_judgments(filename="l.csv", data=text.encode(), benchmark_slug="study", allow_new_models=True)
    report = judge_lab_report()
    for judge in report.judges:
        scores = judge.as_json()["per_class"]
        assert [row["verdict"] for row in scores] == [FIRST, SECOND, TIE]
        counts = np.array(judge.confusion)  # rows: the reference (1, 2, 0); columns: the judge (1, 2, 0, none)
        truth = [verdict for i, verdict in enumerate((1, 2, 0)) for _ in range(int(counts[i].sum()))]
        said = [code for i in range(3) for j, code in enumerate((1, 2, 0, -1)) for _ in range(int(counts[i, j]))]
        precision, recall, f1, support = precision_recall_fscore_support(
            truth, said, labels=[1, 2, 0], zero_division=np.nan
        )
        for k, row in enumerate(scores):
            assert row["support"] == support[k]
            for name, expected in (("precision", precision[k]), ("recall", recall[k]), ("f1", f1[k])):
                if np.isnan(expected):
                    assert row[name] is None, (judge.judge.id, name)
                else:
                    assert row[name] == pytest.approx(expected, abs=1e-12), (judge.judge.id, name)
                    assert row[f"{name}_low"] is None or row[f"{name}_low"] <= row[name] <= row[f"{name}_high"]
    from evalhub.judgelab.report import judge_key

    html = login(viewer).get(f"/judges/{judge_key('gpt-4o')}/").content.decode()
    assert 'id="per-class"' in html and "Precision" in html
