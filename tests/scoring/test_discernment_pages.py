"""The judge-run form, results page and exports."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.urls import reverse

from evalhub.core.dhp.report import build_report, read_scores
from evalhub.jobs.runners import work_chunk
from evalhub.scoring.actions import do_create_discernment_run
from evalhub.scoring.discernment.config import DiscernmentConfig
from evalhub.scoring.models import DiscernmentRun
from tests.scoring.test_discernment import spec


@pytest.fixture
def finished(summaries, server):
    benchmark, system = summaries
    run = do_create_discernment_run(
        DiscernmentConfig(
            benchmark=benchmark,
            family="dhp",
            task="dhp-summarization",
            targets=[system],
            perturbations=[["random_deletions", "minor"], ["reordering", "major"]],
            metrics=["coherence", "fluency"],
            judges=[spec(server, "perfect"), spec(server, "coin")],
            repeats=1,
        ),
        enqueue=False,
    )
    for pk in run.job.chunks.values_list("pk", flat=True):
        work_chunk(pk)
    return DiscernmentRun.objects.get(pk=run.pk)


def form(summaries, server, **overrides):
    benchmark, system = summaries
    return {
        "benchmark": benchmark.pk,
        "family": "dhp",
        "task": "dhp-summarization",
        "targets": [system.pk],
        "perturbations": ["random_deletions:minor", "reordering:major"],
        "metrics": "",
        "judges": spec(server, "perfect"),
        "repeats": 2,
        "mode": "generate",
        "temperature": 0,
        "shape": "summeval",
        "seed": 0,
        **overrides,
    }


def test_an_admin_starts_a_judge_run_from_the_form(
    client,
    login,
    admin_user,
    summaries,
    server,
    monkeypatch,
    django_capture_on_commit_callbacks,
):
    sent = []
    monkeypatch.setattr("evalhub.jobs.tasks.chunk_task.apply_async", lambda args, queue: sent.append(queue))
    login(admin_user)
    assert client.get(reverse("discernment_create")).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("discernment_create"), form(summaries, server))
    run = DiscernmentRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == run.job.get_absolute_url()
    assert run.metrics == ["coherence", "consistency", "fluency", "relevance"], "empty means all of the task's"
    assert sent == ["default"] * run.job.chunks.count(), "API judges run on the default queue"


def test_the_form_names_every_problem_and_creates_nothing(client, login, admin_user, summaries, server):
    login(admin_user)
    response = client.post(
        reverse("discernment_create"),
        form(summaries, server, task="yescieval", perturbations=["grammatical_errors:minor"], judges="nonsense:x"),
    )
    assert response.status_code == 400
    assert "YESciEval runs use the YESciEval task" in response.content.decode()
    response = client.post(
        reverse("discernment_create"), form(summaries, server, perturbations=["grammatical_errors:minor"])
    )
    assert response.status_code == 400
    assert "name the perturbation LLM" in response.content.decode()
    assert not DiscernmentRun.objects.exists()


@pytest.mark.parametrize("persona", ["viewer", "adjudicator", "outsider"])
def test_only_admins_start_judge_runs(client, login, request, persona, summaries, server):
    login(request.getfixturevalue(persona))
    assert client.post(reverse("discernment_create"), form(summaries, server)).status_code == 403


def test_the_results_page_shows_discernment_per_judge_and_marks_what_it_noticed(client, login, viewer, finished):
    login(viewer)
    page = client.get(finished.job.get_absolute_url()).content.decode()
    assert reverse("discernment_results", args=[finished.job_id]) in page
    results = client.get(reverse("discernment_results", args=[finished.job_id])).content.decode()
    assert "random_deletions (minor)" in results
    assert "reordering (major)" in results
    assert "✓ discerns every perturbation" in results, "the perfect judge"
    assert results.count("<svg") == 2


def test_the_scores_export_recomputes_the_same_report_with_dhp_report(client, login, viewer, finished):
    login(viewer)
    body = client.get(reverse("discernment_export", args=[finished.job_id, "scores", "csv"])).content.decode()
    assert next(csv.reader(io.StringIO(body))) == [
        "judge",
        "item_id",
        "perturbation",
        "level",
        "metric",
        "original_score",
        "perturbed_score",
    ]
    recomputed = build_report(read_scores(body))
    assert recomputed["judges"] == json.loads(json.dumps(finished.job.result["dhp"]["judges"]))


def test_discernment_run_runs_in_process_and_prints_discernment(summaries, server, tmp_path):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    weights = tmp_path / "weights.json"
    weights.write_text('{"reordering": {"coherence": 0.75, "fluency": 0.25}}')
    out = io.StringIO()
    call_command(
        "discernment_run",
        "--benchmark=summ",
        "--targets=sys-a",
        "--perturbations=reordering:major",
        "--metrics=coherence,fluency",
        f"--judge={spec(server, 'perfect')}",
        "--repeats=1",
        f"--weights={weights}",
        stdout=out,
    )
    text = out.getvalue()
    assert "reordering (major)" in text
    assert "D_min 2.78" in text
    run = DiscernmentRun.objects.get()
    assert run.weights_source == str(weights)
    assert run.job.status == "succeeded"
    with pytest.raises(CommandError, match="unknown models: nobody"):
        call_command(
            "discernment_run", "--benchmark=summ", "--targets=nobody", "--perturbations=x:y", "--judge=heuristic"
        )
    with pytest.raises(CommandError, match="name:severity"):
        call_command(
            "discernment_run", "--benchmark=summ", "--targets=sys-a", "--perturbations=typos", "--judge=heuristic"
        )


def test_no_perturbation_on_the_form_says_its_severity_twice():
    """YESciEval's variants are named "Cohesion (subtle)"; the form added " (subtle)" again."""
    import re

    from evalhub.scoring.forms import perturbation_choices

    labels = [label for _, label in perturbation_choices()]
    assert "YESciEval · S · Cohesion (subtle)" in labels or any(label.endswith("Cohesion (subtle)") for label in labels)
    assert not [label for label in labels if re.search(r"\((\w+)\) \(\1\)", label)]
    assert any(label.endswith("(minor)") for label in labels), "DHP's still say theirs"
