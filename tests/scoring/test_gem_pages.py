"""The GEM form, job page results, exports and the gem_score command."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from evalhub.scoring.models import GemPairScore, GemRun


def form_data(reviews, eval_lm, **overrides):
    return {
        "benchmark": reviews["benchmark"].pk,
        "candidates": [reviews["model"].pk],
        "references": [h.pk for h in reviews["humans"]],
        "variants": ["gem-raw"],
        "evaluation_lm": eval_lm,
        "dtype": "auto",
        "seed": 0,
        **overrides,
    }


def test_an_admin_starts_a_gem_run_from_the_form_and_lands_on_its_job(
    client, login, admin_user, reviews, eval_lm, monkeypatch, django_capture_on_commit_callbacks
):
    sent = []
    monkeypatch.setattr("evalhub.jobs.tasks.chunk_task.apply_async", lambda args, queue: sent.append(queue))
    login(admin_user)
    assert client.get(reverse("gem_create")).status_code == 200
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(reverse("gem_create"), form_data(reviews, eval_lm))
    run = GemRun.objects.get()
    assert response.status_code == 302
    assert response["Location"] == run.job.get_absolute_url()
    assert sent == ["gpu"] * run.chunks.count()
    assert client.get(run.job.get_absolute_url()).status_code == 200


def test_the_form_explains_a_bad_configuration_and_creates_nothing(client, login, admin_user, reviews, eval_lm):
    login(admin_user)
    response = client.post(
        reverse("gem_create"),
        form_data(reviews, "heuristic", validation_strategies=["llm_rephrase"], preprocessing_lm="opnai:gpt-4o"),
    )
    assert response.status_code == 400
    text = response.content.decode()
    assert "log-probabilities need one of" in text
    assert "need a validation LM" in text
    assert "Did you mean &#x27;openai&#x27;?" in text or "Did you mean 'openai'?" in text
    assert not GemRun.objects.exists()


@pytest.mark.parametrize("persona", ["viewer", "adjudicator", "outsider"])
def test_only_admins_start_gem_runs(client, login, persona, request, reviews, eval_lm):
    login(request.getfixturevalue(persona))
    assert client.post(reverse("gem_create"), form_data(reviews, eval_lm)).status_code == 403
    assert not GemRun.objects.exists()


def test_the_results_show_the_table_the_chart_validation_and_reported_rows(client, login, viewer, finished_run):
    login(viewer)
    page = client.get(reverse("gem_results", args=[finished_run.job_id])).content.decode()
    assert "GRE-bench: GEM-raw" in page
    assert "Model A" in page
    assert "human baseline" in page
    assert page.count("<circle") == 1, "one marker per row"
    assert page.count('class="marker baseline"') == 4, "one marker per row"
    assert "Average human (pooled over reviewers)" in page
    assert "Sentence deletion" in page
    assert "SMD" in page
    assert "Fewer than two responses" in page
    assert "Per-response scores (" in page
    assert "sentence_deletion" in page
    assert finished_run.evaluation_lm in page


def test_exports_carry_the_same_numbers_as_the_table(client, login, viewer, finished_run):
    login(viewer)
    table = json.loads(client.get(reverse("gem_export", args=[finished_run.job_id, "table", "json"])).content)
    stored = finished_run.job.result["table"]["gem-raw"]
    assert [(r["model"], r["mean"]) for r in table] == [(e["model"], e["mean"]) for e in stored]
    assert all(r["evaluation_lm"] == finished_run.evaluation_lm for r in table)
    body = client.get(reverse("gem_export", args=[finished_run.job_id, "responses", "csv"])).content.decode()
    rows = list(csv.DictReader(io.StringIO(body)))
    scored = GemPairScore.objects.filter(run=finished_run).values("candidate").distinct().count()
    assert len(rows) == scored
    assert {"strategy", "truncated", "score", "references"} <= set(rows[0])


def test_anonymous_visitors_see_no_results(client, finished_run):
    response = client.get(reverse("gem_export", args=[finished_run.job_id, "table", "json"]))
    assert response.status_code == 302
    assert "/login" in response["Location"]


def gem_score(eval_lm: str, *options: str) -> str:
    """What `gem_score` prints for model-a against the three human reviews, in process."""
    out = io.StringIO()
    call_command(
        "gem_score",
        "--benchmark=iclr-mini",
        f"--evaluation-lm={eval_lm}",
        "--references=human-1,human-2,human-3",
        "--candidates=model-a",
        "--variants=gem-raw",
        *options,
        stdout=out,
    )
    return out.getvalue()


def test_gem_score_runs_in_process_and_prints_the_table(reviews, eval_lm):
    text = gem_score(eval_lm)
    assert "GEM-raw" in text
    assert "Model A" in text
    assert "(human baseline)" in text
    run = GemRun.objects.get()
    assert run.job.status == "succeeded"
    assert GemPairScore.objects.filter(run=run).count() == run.pairs_done > 0


def test_gem_score_names_unknown_models(reviews, eval_lm):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="unknown models: nobody"):
        call_command("gem_score", "--benchmark=iclr-mini", f"--evaluation-lm={eval_lm}", "--references=nobody")


def test_the_results_and_job_page_make_the_same_number_of_queries_however_many_issues_and_rows(
    client, login, viewer, finished_run, queries_for
):
    from evalhub.worklog.models import RowIssue

    login(viewer)
    urls = [reverse("gem_results", args=[finished_run.job_id]), finished_run.job.get_absolute_url()]
    before = [queries_for(client, url) for url in urls]
    prompts = list(finished_run.benchmark.prompts.all())
    responses = list(finished_run.benchmark.prompts.first().responses.all())
    RowIssue.objects.bulk_create(
        RowIssue(
            job=finished_run.job,
            prompt=prompts[i % len(prompts)],
            response=responses[i % len(responses)],
            stage="input",
            message="extra",
        )
        for i in range(30)
    )
    assert [queries_for(client, url) for url in urls] == before


def test_an_admin_resumes_a_failed_job_and_only_its_unfinished_chunks_are_sent(
    client, login, admin_user, viewer, finished_run, monkeypatch, django_capture_on_commit_callbacks
):
    from evalhub.jobs.actions import do_fail_job

    chunk = finished_run.job.chunks.first()
    chunk.done_at = None
    chunk.save()
    do_fail_job(finished_run.job, "GPU fell off")
    sent = []
    monkeypatch.setattr("evalhub.jobs.tasks.chunk_task.apply_async", lambda args, queue: sent.append(args))
    url = reverse("resume_job", args=[finished_run.job.pk])
    login(viewer)
    assert client.post(url).status_code == 403
    login(admin_user)
    assert "Resume" in client.get(reverse("job_controls", args=[finished_run.job.pk])).content.decode()
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(url).status_code == 302
    finished_run.job.refresh_from_db()
    assert finished_run.job.status == "queued"
    assert sent == [[chunk.pk]]


def test_an_unknown_export_is_not_found(client, login, viewer, finished_run):
    login(viewer)
    assert client.get(f"/scoring/gem/{finished_run.pk}/everything.csv").status_code == 404
    assert client.get(f"/scoring/gem/{finished_run.pk}/table.xml").status_code == 404
    assert client.get(f"/scoring/discernment/{finished_run.pk}/scores.xml").status_code == 404


def test_a_candidate_variant_that_selects_nothing_is_refused_with_the_variants_there_are(
    client, login, admin_user, reviews, eval_lm
):
    from evalhub.scoring.models import GemRun

    login(admin_user)
    response = client.post(reverse("gem_create"), form_data(reviews, eval_lm, candidate_variant="answer:2h"))
    assert response.status_code == 400
    assert "No response of these models has the variant &#x27;answer:2h&#x27;; there are: imported." in (
        response.content.decode()
    )
    assert not GemRun.objects.exists()


def test_a_group_of_choices_is_headed_by_its_name_and_required_fields_are_marked(client, login, admin_user, reviews):
    import re

    login(admin_user)
    text = client.get(reverse("gem_create")).content.decode()
    candidates, references = text.index("<legend>Candidates"), text.index("<legend>References")
    first_checkbox_after = text.index('name="candidates"', candidates)
    assert candidates < first_checkbox_after < references, "the legend comes before the boxes it names"
    assert re.search(r'<legend>References <span class="required"', text), "references are required"
    assert not re.search(r'<legend>Candidates <span class="required"', text)


def test_gem_score_names_each_validation_metric_it_prints(reviews, eval_lm):
    """Algorithm 1's lines in the command's output: one per strategy and metric, each named."""
    text = gem_score(eval_lm, "--validate=sentence_deletion")
    lines = [line for line in text.splitlines() if ": d=" in line]
    assert lines, text
    assert any(" / gem-raw: d=" in line for line in lines)
    assert any(" / rouge-l: d=" in line for line in lines)
    assert not any("{" in line for line in lines)


def import_grades(finished_run: GemRun) -> dict[int, float]:
    """People's grades (C, B, A as 1, 2, 3) of the run's original responses, imported with import_scores."""
    from evalhub.catalog.actions.scores import check_score_file, do_import_scores
    from evalhub.catalog.models import Response

    originals = Response.objects.filter(prompt__benchmark=finished_run.benchmark, parent__isnull=True).order_by("pk")
    grades = {response.pk: float(1 + n % 3) for n, response in enumerate(originals)}
    records = [
        {
            "prompt_id": response.prompt.external_id,
            "prompt": response.prompt.text,
            "model": response.model.slug,
            "response": response.text,
            "rater": "human-instructor",
            "criterion": "grade",
            "score": grades[response.pk],
            "scale": "1-3",
        }
        for response in originals.select_related("prompt", "model")
    ]
    data = "\n".join(json.dumps(record) for record in records).encode()
    parsed = check_score_file("grades.jsonl", data)
    do_import_scores(parsed=parsed, filename="grades.jsonl", data=data, benchmark_slug=finished_run.benchmark.slug)
    return grades


def test_gem_table_1_correlates_each_metric_with_grades_imported_from_a_file(client, login, viewer, finished_run):
    """GEM, Table 1: people's grades of the reviews come in through import_scores; each metric's ρ with
    them equals scipy's on scores computed here from the stored pairs, independently of the page."""
    from collections import defaultdict
    from statistics import fmean

    from scipy.stats import spearmanr

    from evalhub.catalog.models import Response
    from evalhub.core.text.overlap import rouge_l
    from evalhub.scoring.gem.results import grade_tables

    grades = import_grades(finished_run)

    pmi, rouge = defaultdict(list), defaultdict(list)
    texts = dict(Response.objects.values_list("pk", "text"))
    for candidate, reference, value in GemPairScore.objects.filter(
        run=finished_run, variant="gem-raw", candidate__parent__isnull=True
    ).values_list("candidate_id", "reference_id", "pmi"):
        pmi[candidate].append(value)
        rouge[candidate].append(rouge_l(texts[candidate], texts[reference]))
    table = {row.metric: row for row in grade_tables(finished_run)["grade"]}
    for metric, per_response in (("GEM-raw", pmi), ("ROUGE-L", rouge)):
        shared = sorted(set(per_response) & set(grades))
        expected = spearmanr([fmean(per_response[pk]) for pk in shared], [grades[pk] for pk in shared])
        assert table[metric].n == len(shared) > 3
        assert table[metric].rho == pytest.approx(expected.statistic)
        assert table[metric].p_value == pytest.approx(expected.pvalue)

    login(viewer)
    page = client.get(reverse("gem_results", args=[finished_run.job_id])).content.decode()
    assert "Against people's grades: grade (GEM, Table 1)" in page
    body = client.get(reverse("gem_export", args=[finished_run.job_id, "grades", "csv"])).content.decode()
    exported = {row["metric"]: row for row in csv.DictReader(io.StringIO(body))}
    assert float(exported["GEM-raw"]["rho"]) == pytest.approx(table["GEM-raw"].rho)
    assert exported["GEM-raw"]["n"] == str(table["GEM-raw"].n)


def test_a_finished_runs_baseline_scores_are_computed_once_for_every_later_page(finished_run, monkeypatch):
    """ROUGE-L and BLEU of every pair cost about a millisecond each: the grades table read them again on
    every view."""
    from django.core.cache import cache

    from evalhub.scoring.gem import results

    cache.clear()
    calls = []
    counted = {
        key: (label, lambda a, b, f=metric: calls.append(1) or f(a, b))
        for key, (label, metric) in results.BASELINES.items()
    }
    monkeypatch.setattr(results, "BASELINES", counted)
    first = results.baseline_response_scores(finished_run)
    once = len(calls)
    assert once > 0
    assert results.baseline_response_scores(GemRun.objects.select_related("job").get(pk=finished_run.pk)) == first
    assert len(calls) == once


def test_a_finished_runs_pages_and_exports_read_its_responses_in_bounded_queries(
    client, login, viewer, finished_run, monkeypatch
):
    """A run's responses, their texts and people's grades were each read in one `IN` list as long as the
    run: past SQLite's variable limit its results page answered 500. Each bounded query here names at most
    two values, fewer than the run has responses."""
    from django.core.cache import cache
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from evalhub.system import bounded_queries
    from tests.query_sizes import longest_in_list

    import_grades(finished_run)
    assert GemPairScore.objects.filter(run=finished_run).values("candidate").distinct().count() > 2
    monkeypatch.setattr(bounded_queries, "PER_QUERY", 2)
    cache.clear()
    login(viewer)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(reverse("gem_results", args=[finished_run.job_id])).status_code == 200
        for table in ("responses", "grades"):
            assert client.get(reverse("gem_export", args=[finished_run.job_id, table, "csv"])).status_code == 200
    assert longest_in_list(queries) <= 2
