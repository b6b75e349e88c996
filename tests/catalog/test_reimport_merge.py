"""A labels file imported again over labels already stored: new labels added in the file's order, changed
ones updated in place (their counts taken away and added again), the rest unchanged. On PostgreSQL the
server merges them (the file's labels staged, compared in SQL): reading every stored label back to the
client and comparing there cost an unchanged re-import of a million labels 1.17x the first import."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.models import Judgment
from evalhub.dashboards.counts import do_rebuild_tallies
from tests.dashboards.test_counts import snapshot

pytestmark = pytest.mark.django_db
HEADER = "prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner,probability_a,blind_winner,aid"


def row(n: int, judge: str, winner: str = "a", probability: str = "", blind: str = "", aid: str = "") -> str:
    return f"q{n},Question {n}?,gpt-4o,llama-3,A{n},B{n},{judge},{winner},{probability},{blind},{aid}"


def stored() -> dict[tuple[str, str], tuple]:
    return {
        (judge, prompt): (pk, verdict, probability, blind, aid, metadata)
        for pk, judge, prompt, verdict, probability, blind, aid, metadata in Judgment.objects.values_list(
            "pk",
            "judge_model__slug",
            "response__prompt__external_id",
            "verdict",
            "probability",
            "blind_verdict",
            "aid",
            "metadata",
        )
    }


@pytest.mark.parametrize("at_a_time", [2, 100_000])
def test_a_second_file_adds_changes_and_keeps_labels_as_the_first_left_them(monkeypatch, at_a_time):
    """On PostgreSQL the changed and new labels' ids stay on the server and are counted `at_a_time` ids
    a call: they came back to the client in one list (ten million new votes: two lists of 1 GB each)."""
    from evalhub.catalog.actions import judgment_import_state, judgments

    monkeypatch.setattr(judgment_import_state, "COUNTED_AT_A_TIME", at_a_time, raising=False)
    counted: list[int] = []
    real = judgments.do_count_imported

    def count(ids, sign):
        counted.append(len(ids))
        return real(ids, sign)

    monkeypatch.setattr(judgments, "do_count_imported", count)
    first = (
        [HEADER]
        + [row(n, "judge-1", "a", "0.7") for n in range(6)]
        + [row(n, "human-1", "b", "", "a", "debate") for n in range(4)]
    )
    do_import_judgments(filename="1.csv", data="\n".join(first).encode(), benchmark_slug="b", allow_new_models=True)
    before = stored()
    second = [HEADER]
    second += [row(n, "judge-2", "tie") for n in range(3)]  # a new judge first: written before any stored one is met
    second += [row(0, "judge-1", "a", "0.7"), row(1, "judge-1", "b", "0.2")]  # unchanged, changed
    second += [row(2, "judge-1", "tie (bothbad)", "0.7"), row(3, "judge-1", "a", "0.9")]  # both bad, probability
    second += [row(7, "judge-1", "b"), row(3, "judge-2", "a"), row(6, "judge-1", "a")]  # new, in the file's order
    second += [row(0, "human-1", "b", "", "a", "debate"), row(1, "human-1", "b", "", "b", "critique")]
    with CaptureQueriesContext(connection) as queries:
        again = do_import_judgments(
            filename="2.csv", data="\n".join(second).encode(), benchmark_slug="b", allow_new_models=True
        )
    after = stored()

    assert (
        again.counts["judgments_created"],
        again.counts["judgments_replaced"],
        again.counts["judgments_unchanged"],
    ) == (6, 4, 2)
    for unchanged in (("judge-1", "q0"), ("human-1", "q0"), ("judge-1", "q4"), ("judge-1", "q5")):
        assert after[unchanged] == before[unchanged]
    for changed in (("judge-1", "q1"), ("judge-1", "q2"), ("judge-1", "q3"), ("human-1", "q1")):
        assert after[changed][0] == before[changed][0], "updated in place: the row keeps its key"
    assert after[("judge-1", "q1")][1:3] == (2, 0.2)
    assert after[("judge-1", "q2")][1] == 0 and after[("judge-1", "q2")][5] == {"arena_winner": "tie (bothbad)"}
    assert after[("judge-1", "q3")][2] == 0.9
    assert after[("human-1", "q1")][3:5] == (2, "critique")
    new = [after[key][0] for key in (("judge-1", "q7"), ("judge-2", "q3"), ("judge-1", "q6"))]
    assert new == sorted(new) and min(new) > max(pk for pk, *_ in before.values()), "new labels in the file's order"
    kept = snapshot()
    do_rebuild_tallies()
    assert snapshot() == kept, "the counts as a rebuild from the labels gives them"
    if connection.vendor == "postgresql":  # no stored label was read back to the client
        assert not [q for q in queries if 'SELECT "catalog_judgment"."criterion_id" AS' in q["sql"]]
        assert max(counted) <= at_a_time and sum(counted) == 4 + 4 + 3  # changed: out, in again; new of judge-1
