"""Judge versions: each change a new version naming its parent, listed with its changes on the judge's
versions page and in its JSON export; admins make them, readers read them."""

from __future__ import annotations

import json

import pytest

from evalhub.alignment.actions import VersionRejected, do_create_judge, do_derive_version
from evalhub.alignment.models import JudgeVersion, Method
from evalhub.core.alignment.versions import JudgeDefinition

pytestmark = pytest.mark.django_db

FIRST = JudgeDefinition(spec="heuristic", instructions="Prefer the correct answer.")


def test_each_version_takes_the_next_number_names_its_parent_and_must_change_something():
    first = do_create_judge("strict", FIRST)
    second = do_derive_version(first, JudgeDefinition(spec="heuristic", instructions="Prefer <b>correct</b> answers."))
    third = do_derive_version(second, JudgeDefinition(spec="heuristic:detail", instructions=second.judge.instructions))
    assert [(v.number, v.parent_id) for v in JudgeVersion.objects.all()] == [(1, None), (2, first.pk), (3, second.pk)]
    with pytest.raises(VersionRejected, match="nothing changed"):
        do_derive_version(third, third.judge)
    with pytest.raises(VersionRejected, match="names the split"):
        do_derive_version(third, FIRST, method=Method.FEW_SHOT)
    with pytest.raises(VersionRejected, match="exists"):
        do_create_judge("strict", FIRST)
    with pytest.raises(VersionRejected, match="slug"):
        do_create_judge("not a slug", FIRST)


def test_the_versions_page_and_export_show_what_each_version_changed_escaped(login, viewer):
    first = do_create_judge("strict", FIRST)
    do_derive_version(
        first, JudgeDefinition(spec="heuristic", instructions="<script>alert(1)</script>"), note="tighter"
    )
    client = login(viewer)
    page = client.get("/judge-versions/strict/").content.decode()
    assert "v2 <small>from v1</small>" in page
    assert "-Prefer the correct answer." in page
    assert "+&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)" not in page
    assert "A new version by hand" not in page, "a viewer makes no version"
    exported = json.loads(client.get("/judge-versions/strict.json").content)
    assert [row["version"] for row in exported["versions"]] == [1, 2]
    assert exported["versions"][1]["changes"][0]["field"] == "instructions"
    assert exported["versions"][1]["definition"]["instructions"] == "<script>alert(1)</script>"
    assert client.get("/judge-versions/").status_code == 200
    assert client.get("/judge-versions/nobody/").status_code == 404


def test_an_admin_defines_a_judge_and_its_next_version_on_the_pages(login, admin_user):
    client = login(admin_user)
    form = {"name": "careful", "spec": "heuristic", "criteria_variant": "original", "samples": 1, "scale": "choice"}
    answer = client.post("/judge-versions/new/", {**form, "temperature": 0, "instructions": "Check facts."})
    assert answer.status_code == 302
    answer = client.post(
        "/judge-versions/careful/derive/",
        {**form, "temperature": 0, "instructions": "Check facts.", "privileged_sources": ["reference_answer"]},
    )
    assert answer.status_code == 302
    latest = JudgeVersion.objects.get(name="careful", number=2)
    assert latest.judge.privileged_sources == ("reference_answer",)
    assert latest.created_by == admin_user
    again = client.post("/judge-versions/new/", {**form, "temperature": 0})
    assert again.status_code == 400
    assert "exists; derive a new version" in again.content.decode()


def test_only_an_admin_makes_versions(login, viewer, adjudicator, outsider):
    first = do_create_judge("strict", FIRST)
    form = {
        "name": "x",
        "spec": "heuristic",
        "criteria_variant": "original",
        "samples": 1,
        "scale": "choice",
        "temperature": 0,
    }
    for person in (viewer, adjudicator, outsider):
        client = login(person)
        assert client.post("/judge-versions/new/", form).status_code == 403
        assert client.post("/judge-versions/strict/derive/", form).status_code == 403
    assert list(JudgeVersion.objects.all()) == [first]
    assert login(outsider).get("/judge-versions/").status_code == 403
