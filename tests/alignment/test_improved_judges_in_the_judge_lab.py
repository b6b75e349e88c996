"""The judge lab scores a judge improved on people's train labels on held-out pairs only, marks it, and
shows its train pairs only when asked, saying they are optimistic."""

from __future__ import annotations

import pytest

from evalhub.alignment.actions import do_create_judge, do_run_version
from evalhub.alignment.improvers.fewshot import do_improve_with_examples
from evalhub.core.alignment.versions import JudgeDefinition
from evalhub.judgelab.report import judge_key
from tests.alignment.test_few_shot_versions import study

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def versions():
    _, reference = study(lambda number, held_out: True)
    first = do_create_judge("detail", JudgeDefinition(spec="heuristic:detail"))
    do_run_version(first, reference)
    second = do_improve_with_examples(first, "study", "helpfulness", k=4)
    do_run_version(second, reference)
    return first, second


def judges(client, **query) -> dict:
    exported = client.get("/judges/report.json", {"benchmark": "study", **query}).json()
    return {judge["name"]: judge for judge in exported["judges"]}


def test_an_improved_judge_is_scored_on_held_out_pairs_unless_asked_and_its_parent_on_all(versions, login, viewer):
    client = login(viewer)
    found = judges(client)
    parent, improved = found["detail v1"], found["detail v2"]
    assert (parent["judged"], parent["scored_on"], parent["improved_on_train_labels"]) == (40, "all pairs", False)
    assert (improved["judged"], improved["scored_on"], improved["improved_on_train_labels"]) == (
        20,
        "held-out pairs only",
        True,
    )
    assert improved["agreement"] == 1.0
    everything = judges(client, improved="all")["detail v2"]
    assert (everything["judged"], everything["scored_on"]) == (40, "all pairs (optimistic)")
    page = client.get("/judges/", {"benchmark": "study"}).content.decode()
    assert "improved · held-out pairs" in page
    detail = client.get(f"/judges/{judge_key('detail v2')}/", {"benchmark": "study", "improved": "all"})
    assert "so they are <strong>optimistic</strong>" in detail.content.decode()
    assert 'A version of the judge <a href="/judge-versions/detail/">detail</a>' in detail.content.decode()
