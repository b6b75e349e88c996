"""The dhp_report command, and the survey weights export it reads."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from tests.core.dhp.test_discernment import scores_csv


def test_it_writes_the_documented_json(tmp_path):
    scores = tmp_path / "scores.csv"
    scores.write_text(scores_csv({"gpt": lambda o, rng: o - 1}))
    out = tmp_path / "report.json"
    call_command("dhp_report", "--scores", str(scores), "--out", str(out))
    report = json.loads(out.read_text())
    typos = report["judges"]["gpt"]["perturbations"]["typos"]
    assert set(typos) == {"level", "p_by_metric", "p", "p_ew", "D", "D_ew", "n"}
    assert typos["level"] == "C"
    assert set(report["judges"]["gpt"]["summary"]) == {
        "D_avg",
        "D_min",
        "D_avg_ew",
        "D_min_ew",
        "D_min_over",
        "min_items",
    }


def test_a_bad_file_fails_with_the_row_named(tmp_path):
    scores = tmp_path / "scores.csv"
    scores.write_text("judge,item_id,perturbation,level,metric,original_score,perturbed_score\nj,1,t,Q,f,4,3\n")
    with pytest.raises(CommandError, match="line 2: unknown level 'Q'"):
        call_command("dhp_report", "--scores", str(scores), "--out", str(tmp_path / "o.json"))


@pytest.mark.django_db
def test_the_weights_exported_by_a_survey_load_in_dhp_report(tmp_path, login, admin_user):
    from evalhub.surveys.actions import do_create_blank, do_edit, do_invite, do_publish, do_submit

    survey = do_create_blank("DHP toy")
    metrics = [
        {"key": "fluency", "name": "Fluency", "definition": "f"},
        {"key": "coherence", "name": "Coherence", "definition": "c"},
    ]
    issues = [{"key": k, "description": k} for k in ("typos", "deletions", "entities", "reorder")]
    version = do_publish(do_edit(survey, "Pick.", metrics, issues))
    invitation = do_invite(version)
    for step in range(1, 5):
        Client().post(f"/surveys/{invitation.token}/", {"step": step, "metric": "fluency", "go": "next"})
    do_submit(invitation)
    weights = tmp_path / "weights.json"
    weights.write_bytes(login(admin_user).get(f"/surveys/manage/{survey.slug}/v1/weights.json").content)
    scores = tmp_path / "scores.csv"
    scores.write_text(scores_csv({"j": lambda o, rng: o - (rng.random() < 0.5)}))
    out = tmp_path / "report.json"
    call_command("dhp_report", "--scores", str(scores), "--weights", str(weights), "--out", str(out))
    entry = json.loads(out.read_text())["judges"]["j"]
    assert entry["uniform_weights_for"] == []
    typos = entry["perturbations"]["typos"]
    assert typos["p_ew"] == pytest.approx(typos["p_by_metric"]["fluency"])
