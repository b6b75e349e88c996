"""GEM jobs end to end on a tiny model: chunks, rows, resume, bad input, the GRE-bench table."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict

import pytest
from django.db import connections
from django.db.models import F

from evalhub.catalog.models import Response
from evalhub.core.gem.pairs import mean_difference
from evalhub.core.text.overlap import rouge_l
from evalhub.jobs.actions import do_request_stop
from evalhub.jobs.chunks import do_resume_job
from evalhub.jobs.models import JobStatus, StopRequest
from evalhub.jobs.runners import work_chunk
from evalhub.jobs.tasks import chunk_task
from evalhub.llm.scoring.transformers_scorer import TransformersScorer
from evalhub.llm.testing import FakeLLMServer
from evalhub.scoring.actions import do_create_gem_run
from evalhub.scoring.gem import runner as gem_runner
from evalhub.scoring.gem.config import GemConfig
from evalhub.scoring.gem.runner import GemRunner
from evalhub.scoring.models import GemPairScore, GemRun
from evalhub.worklog.models import DerivedText, RowIssue


def make_run(reviews, eval_lm, *, chunk_prompts=2, enqueue=False, **overrides):
    fields = {
        "benchmark": reviews["benchmark"],
        "candidates": [reviews["model"]],
        "references": reviews["humans"],
        "variants": ["gem-raw"],
        "evaluation_lm": eval_lm,
        **overrides,
    }
    return do_create_gem_run(GemConfig(**fields), chunk_prompts=chunk_prompts, enqueue=enqueue)


def run_all(run):
    return [work_chunk(chunk_id) for chunk_id in run.chunks.values_list("pk", flat=True)]


def test_a_run_scores_every_pair_once_and_finishes_with_the_gre_bench_table(reviews, eval_lm):
    run = make_run(reviews, eval_lm)
    assert run.chunks.count() == 2
    assert run_all(run) == ["recorded", "recorded"]
    run.refresh_from_db()
    job = run.job
    # 3 full prompts: model × 3 humans + each human × 2 others = 9; the lonely prompt: model × 1 human.
    assert GemPairScore.objects.filter(run=run).count() == 3 * 9 + 1 == run.pairs_done
    assert job.status == JobStatus.SUCCEEDED
    assert job.progress_done == job.progress_total
    assert not GemPairScore.objects.filter(run=run, candidate=F("reference")).exists()

    # The table, recomputed by hand from the stored pair rows.
    per_response = defaultdict(list)
    for candidate, pmi in GemPairScore.objects.filter(run=run).values_list("candidate_id", "pmi"):
        per_response[candidate].append(pmi)
    model_scores = [
        statistics.fmean(per_response[r.pk]) for r in Response.objects.filter(model=reviews["model"], parent=None)
    ]
    row = next(e for e in job.result["table"]["gem-raw"] if e["model"] == "model-a")
    se = statistics.stdev(model_scores) / math.sqrt(len(model_scores))
    assert row["mean"] == pytest.approx(statistics.fmean(model_scores))
    assert (row["low"], row["high"]) == pytest.approx((row["mean"] - 1.645 * se, row["mean"] + 1.645 * se))
    assert row["n"] == 4
    assert not row["baseline"]
    humans = [e for e in job.result["table"]["gem-raw"] if e["model"].startswith("human") and not e.get("pooled")]
    assert len(humans) == 3
    assert all(e["baseline"] for e in humans)
    # The paper's one "average human" row: every reviewer's responses pooled, with their 90% interval.
    [pooled] = [e for e in job.result["table"]["gem-raw"] if e.get("pooled")]
    human_scores = [
        statistics.fmean(per_response[r.pk])
        for r in Response.objects.filter(model__in=reviews["humans"], parent=None)
        if r.pk in per_response
    ]
    pooled_se = statistics.stdev(human_scores) / math.sqrt(len(human_scores))
    assert pooled["mean"] == pytest.approx(statistics.fmean(human_scores))
    assert pooled["n"] == len(human_scores)
    assert pooled["low"] == pytest.approx(pooled["mean"] - 1.645 * pooled_se)
    assert job.result["setup"]["evaluation_lm"] == eval_lm
    assert job.result["setup"]["prompt_version"]


def test_a_prompt_with_fewer_than_two_responses_is_reported_not_failed(reviews, eval_lm):
    run = make_run(reviews, eval_lm)
    run_all(run)
    issue = RowIssue.objects.get(job=run.job, prompt=reviews["lonely"])
    assert "Fewer than two responses" in issue.message
    assert run.job.__class__.objects.get(pk=run.job.pk).status == JobStatus.SUCCEEDED


def test_a_retried_or_killed_chunk_never_writes_a_row_twice(reviews, eval_lm):
    run = make_run(reviews, eval_lm)
    chunk = run.chunks.first()
    # A worker computed the chunk and died before its transaction: nothing was written…
    lost = gem_runner.run_chunk_work(run, chunk)
    assert GemPairScore.objects.filter(run=run).count() == 0
    # …the queue runs the chunk again (acks_late), then a late duplicate delivery arrives.
    assert work_chunk(chunk.pk) == "recorded"
    written = GemPairScore.objects.filter(run=run).count()
    assert work_chunk(chunk.pk) == "done"
    assert GemRunner(GemRunner.load(chunk.job_id)).record(chunk, lost) is False
    assert GemPairScore.objects.filter(run=run).count() == written > 0
    assert chunk_task.acks_late
    assert chunk_task.reject_on_worker_lost


def test_a_failed_chunk_fails_the_job_with_its_cause_and_resume_finishes_the_rest(
    reviews, eval_lm, monkeypatch, django_capture_on_commit_callbacks
):
    run = make_run(reviews, eval_lm)
    first, second = run.chunks.all()
    work_chunk(first.pk)
    kept = GemPairScore.objects.filter(run=run).count()
    real = gem_runner.run_chunk_work
    monkeypatch.setattr(gem_runner, "run_chunk_work", lambda *a: (_ for _ in ()).throw(RuntimeError("GPU fell off")))
    with pytest.raises(RuntimeError):
        work_chunk(second.pk)
    run.job.refresh_from_db()
    assert run.job.status == JobStatus.FAILED
    assert "GPU fell off" in run.job.error

    monkeypatch.setattr(gem_runner, "run_chunk_work", real)
    with django_capture_on_commit_callbacks(execute=True):  # tasks run eagerly in tests
        do_resume_job(run.job)
    run.job.refresh_from_db()
    assert run.job.status == JobStatus.SUCCEEDED
    assert GemPairScore.objects.filter(run=run).count() > kept
    assert GemPairScore.objects.filter(run=run, candidate__prompt__in=first.unit_ids).count() == kept


def test_chunks_go_to_the_gpu_queue(reviews, eval_lm, monkeypatch, django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr(chunk_task, "apply_async", lambda args, queue: sent.append((args, queue)))
    with django_capture_on_commit_callbacks(execute=True):
        run = make_run(reviews, eval_lm, enqueue=True)
    assert sorted(sent) == sorted(([pk], "gpu") for pk in run.chunks.values_list("pk", flat=True))


def test_a_cancelled_job_stops_at_the_next_chunk(reviews, eval_lm):
    run = make_run(reviews, eval_lm)
    first, second = run.chunks.all()
    work_chunk(first.pk)
    do_request_stop(run.job, StopRequest.CANCEL)
    assert work_chunk(second.pk) == "cancelled"
    run.job.refresh_from_db()
    assert run.job.status == JobStatus.CANCELLED
    assert not GemPairScore.objects.filter(run=run, candidate__prompt__in=second.unit_ids).exists()


def test_a_model_without_a_chat_template_fails_the_job_naming_it_and_is_reported_per_prompt(
    reviews, tmp_path, tiny_model, tiny_tokenizer
):
    from evalhub.llm.tiny import build_tokenizer
    from tests.tiny_models import CORPUS

    bare = build_tokenizer(CORPUS, vocab_size=600, chat_template=None)
    tiny_model.save_pretrained(tmp_path)
    bare.save_pretrained(tmp_path)
    run = make_run(reviews, f"transformers:{tmp_path}")
    run_all(run)
    run.job.refresh_from_db()
    assert run.job.status == JobStatus.FAILED
    assert run.job.message.startswith(f"Evaluation LM transformers:{tmp_path} failed every call:")
    assert "chat template" in run.job.message
    assert GemPairScore.objects.filter(run=run).count() == 0
    messages = set(RowIssue.objects.filter(job=run.job, stage="scoring").values_list("message", flat=True))
    assert any("chat template" in m for m in messages)
    assert RowIssue.objects.filter(job=run.job, stage="scoring").count() == 4  # every prompt, none silently dropped


def test_a_context_too_long_cuts_the_candidate_and_flags_the_row(
    reviews, eval_lm, tiny_model, tiny_tokenizer, monkeypatch
):
    from evalhub.core.gem.pairs import GemPair
    from evalhub.llm.scoring.chat_template import encode_request

    long_text = " ".join(["The reviewer appreciates the clear writing."] * 60)
    prompt = reviews["prompts"][0]
    Response.objects.filter(prompt=prompt, model=reviews["model"]).update(text=long_text)
    # The longest sequence any other pair needs: everything else fits, the long review does not.
    others = Response.objects.exclude(text=long_text)
    references = Response.objects.filter(model__is_human=True)
    limit = 5 + max(
        encode_request(tiny_tokenizer, list(GemPair(0, 1, c.text, r.text).conditional_request().prefix), r.text).length
        for c in others
        for r in references
    )
    run = make_run(reviews, eval_lm)
    short = TransformersScorer(model=tiny_model, tokenizer=tiny_tokenizer, max_length=limit)
    monkeypatch.setattr(gem_runner, "scorer_for", lambda _run: short)
    run_all(run)
    cut = GemPairScore.objects.filter(run=run, truncated=True)
    assert cut.exists()
    assert set(cut.values_list("candidate__prompt", flat=True)) == {prompt.pk}
    assert not GemPairScore.objects.filter(run=run, truncated=False, candidate__text=long_text).exists()


def preprocessor(messages):
    review = messages[-1]["content"]
    if "BROKEN" in review:
        return ""  # the provider answers with nothing: that response cannot be preprocessed
    return "The reviewer appreciates " + review.split()[-1]


def test_preprocessing_is_stored_once_and_a_failed_row_is_reported(reviews, eval_lm, monkeypatch):
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "test-key")
    broken = Response.objects.get(prompt=reviews["prompts"][0], model=reviews["humans"][2])
    broken.text = "BROKEN review"
    broken.save()
    with FakeLLMServer(reply=preprocessor) as server:
        spec = f"openai-compatible:{server.url}/v1|preprocessor"
        run = make_run(reviews, eval_lm, variants=["gem"], preprocessing_lm=spec)
        run_all(run)
        calls = server.request_count
        again = make_run(reviews, eval_lm, variants=["gem"], preprocessing_lm=spec)
        run_all(again)
        # The one rewrite that failed (the model answered nothing) is asked again; the others are reused.
        assert server.request_count == calls + 1, "the second run reuses the stored rewrites"
    distinct_texts = Response.objects.filter(prompt__benchmark=reviews["benchmark"]).values("text").distinct().count()
    assert DerivedText.objects.filter(purpose="gem:c1").count() == distinct_texts - 1
    issue = RowIssue.objects.get(job=run.job, stage="preprocess")
    assert issue.response_id == broken.pk
    assert "answered nothing" in issue.message
    assert not GemPairScore.objects.filter(run=run, candidate=broken).exists()
    assert not GemPairScore.objects.filter(run=run, reference=broken).exists()
    assert GemPairScore.objects.filter(run=run).count() > 0


def test_gem_s_without_an_abstract_is_reported_for_that_prompt(reviews, eval_lm):
    for response in Response.objects.all():
        response.metadata = {"preprocessed": "The reviewer appreciates " + response.text[-12:]}
        response.save()
    run = make_run(reviews, eval_lm, variants=["gem-s-abstract"])
    run_all(run)
    assert RowIssue.objects.filter(job=run.job, prompt=reviews["prompts"][1], message__contains="no synopsis").exists()
    assert GemPairScore.objects.filter(run=run, candidate__prompt=reviews["prompts"][0]).exists()
    assert not GemPairScore.objects.filter(run=run, candidate__prompt=reviews["prompts"][1]).exists()


def test_validation_strategies_score_derived_copies_and_report_the_smd(reviews, eval_lm):
    run = make_run(reviews, eval_lm, validation_strategies=["sentence_deletion", "random_replacement"])
    run_all(run)
    run.job.refresh_from_db()
    derived = Response.objects.filter(parent__model=reviews["model"], perturbation="gem:sentence_deletion")
    assert derived.count() == 4
    assert all(d.text.count(".") < d.parent.text.count(".") for d in derived)
    # A degraded copy is never scored against its own original.
    assert not GemPairScore.objects.filter(run=run, candidate__parent__isnull=False, reference__derived__isnull=False)

    def score(response_id):
        return statistics.fmean(
            GemPairScore.objects.filter(run=run, candidate_id=response_id).values_list("pmi", flat=True)
        )

    scored = [d for d in derived if GemPairScore.objects.filter(run=run, candidate=d).exists()]
    expected = mean_difference([score(d.parent_id) for d in scored], [score(d.pk) for d in scored], seed=run.seed)
    cell = run.job.result["validation"]["sentence_deletion"]["by_metric"]["gem-raw"]
    assert cell["d"] == pytest.approx(expected.d)
    assert cell["p"] == pytest.approx(expected.p)
    assert cell["n"] == 4
    assert run.job.result["validation"]["random_replacement"]["kind"] == "degradation"
    # The ROUGE-L baseline over the same pairs, recomputed independently of the summary code.
    rouge = run.job.result["validation"]["sentence_deletion"]["by_metric"]["rouge-l"]
    pairs = GemPairScore.objects.filter(run=run, variant="gem-raw").select_related("candidate", "reference")

    def rouge_score(response_id):
        return statistics.fmean(
            rouge_l(p.candidate.text, p.reference.text) for p in pairs if p.candidate_id == response_id
        )

    expected = mean_difference([rouge_score(d.parent_id) for d in scored], [rouge_score(d.pk) for d in scored], seed=0)
    assert rouge["d"] == pytest.approx(expected.d)
    assert rouge["n"] == 4


def test_an_llm_strategy_without_a_validation_lm_is_refused_up_front(reviews, eval_lm):
    with pytest.raises(ValueError, match="validation LM"):
        make_run(reviews, eval_lm, validation_strategies=["llm_rephrase"])
    with pytest.raises(ValueError, match="log-probabilities"):
        make_run(reviews, "heuristic")


def examiner(messages):
    review = messages[-1]["content"].split("[Review]\n\n", 1)[1]
    if "Paper 2." in review and "The datasets are small." in review:  # one original the examiner cannot score
        return "I cannot score this one."
    sentences = review.count(".")
    return f"<analysis>\n\nFine.\n\n</analysis>\n\n<overall_score>\n\n{min(10, sentences)}\n\n</overall_score>"


def test_the_lm_examiner_baseline_joins_the_validation_table(reviews, eval_lm, monkeypatch):
    from evalhub.core.gem.prompts import parse_examiner_score
    from evalhub.scoring.models import ExaminerScore

    assert parse_examiner_score("<overall_score>\n[7.5]\n</overall_score>") == 7.5
    assert parse_examiner_score("<overall_score>11</overall_score>") is None
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "test-key")
    with FakeLLMServer(reply=examiner) as server:
        run = make_run(
            reviews,
            eval_lm,
            validation_strategies=["sentence_deletion"],
            examiner_lm=f"openai-compatible:{server.url}/v1|examiner",
        )
        run_all(run)
    run.job.refresh_from_db()
    scores = dict(ExaminerScore.objects.filter(run=run).values_list("response_id", "score"))
    derived = Response.objects.filter(perturbation="gem:sentence_deletion", parent__in=list(scores))
    paired = [(scores[d.parent_id], scores[d.pk]) for d in derived if d.pk in scores]
    expected = mean_difference([b for b, _ in paired], [a for _, a in paired], seed=0)
    cell = run.job.result["validation"]["sentence_deletion"]["by_metric"]["lm-examiner"]
    assert cell["d"] == pytest.approx(expected.d)
    assert cell["d"] < 0
    assert cell["n"] == len(paired) == 3
    assert RowIssue.objects.filter(job=run.job, message__startswith="LMExaminer: no <overall_score>").count() == 1
    assert {"key": "lm-examiner", "label": "LMExaminer"} in run.job.result["validation_metrics"]


def test_a_candidate_variant_scores_only_those_responses_and_plans_its_progress_to_match(reviews, eval_lm):
    # The model also has generated reviews (variant gre-bench-review:0h) on the three full prompts.
    generated = [
        Response.objects.create(prompt=p, model=reviews["model"], variant="gre-bench-review:0h", text=f"Generated {n}.")
        for n, p in enumerate(reviews["prompts"])
    ]
    run = make_run(reviews, eval_lm, candidate_variant="gre-bench-review:0h")
    assert run.job.progress_total == 3 * 9  # the lonely prompt has no generated review: no pair for it
    run_all(run)
    run.refresh_from_db()
    scored = set(GemPairScore.objects.filter(run=run, candidate__model=reviews["model"]).values_list("candidate_id"))
    assert scored == {(r.pk,) for r in generated}
    assert run.pairs_done == run.job.progress_total == run.job.progress_done
    imported = make_run(reviews, eval_lm, candidate_variant="imported")
    assert imported.job.progress_total == 3 * 9 + 1  # the imported reviews, as before the generated ones


def test_gem_without_a_preprocessing_lm_or_imported_texts_is_refused_before_anything_is_created(reviews, eval_lm):
    from evalhub.jobs.models import Job
    from evalhub.scoring.models import GemRun

    with pytest.raises(ValueError, match="no imported 'preprocessed' text while no preprocessing LM is set"):
        make_run(reviews, eval_lm, variants=["gem-raw", "gem"])
    with pytest.raises(ValueError, match="GEM-S \\(ASSW\\) needs a preprocessing LM"):
        make_run(reviews, eval_lm, variants=["gem-s-assw"])
    assert not GemRun.objects.exists()
    assert not Job.objects.exists()


def test_gem_on_imported_preprocessed_texts_needs_no_preprocessing_lm(reviews, eval_lm):
    for response in Response.objects.filter(parent=None):
        response.metadata = {**(response.metadata or {}), "preprocessed": f"The reviewer appreciates {response.pk}."}
        response.save(update_fields=["metadata"])
    run = make_run(reviews, eval_lm, variants=["gem"])
    run_all(run)
    run.job.refresh_from_db()
    assert run.job.status == JobStatus.SUCCEEDED


@pytest.mark.django_db(transaction=True)
def test_cancel_mid_chunk_stops_the_scorer_between_batches_and_keeps_the_finished_chunk(reviews, eval_lm, monkeypatch):
    import threading
    import time

    from django.test import override_settings

    from evalhub.jobs.actions import do_request_stop
    from evalhub.jobs.models import Job
    from evalhub.llm.scoring.transformers_scorer import TransformersScorer

    for response in Response.objects.filter(parent=None):  # two variants: two scoring passes per chunk
        response.metadata = {**(response.metadata or {}), "preprocessed": f"The reviewer appreciates {response.pk}."}
        response.save(update_fields=["metadata"])
    run = make_run(reviews, eval_lm, variants=["gem-raw", "gem"])
    first, second = run.chunks.all()
    assert work_chunk(first.pk) == "recorded"
    kept = GemPairScore.objects.filter(run=run).count()
    batches = []
    real = TransformersScorer._run_with_backoff

    def slow_batch(self, *args):
        batches.append(1)
        if len(batches) == 1:  # the user cancels while the first batch of the chunk runs
            canceller = threading.Thread(
                target=lambda: (do_request_stop(Job.objects.get(pk=run.job_id), "cancel"), connections.close_all())
            )
            canceller.start()
            canceller.join()
            time.sleep(0.3)  # the chunk's heartbeat reads the request
        return real(self, *args)

    monkeypatch.setattr(TransformersScorer, "_run_with_backoff", slow_batch)
    with override_settings(EVALHUB_HEARTBEAT_SECONDS=0.05):
        assert work_chunk(second.pk) == "cancel"
    job = Job.objects.get(pk=run.job_id)
    assert job.status == JobStatus.CANCELLED
    assert len(batches) == 1, "no batch started after the cancel was seen"
    assert GemPairScore.objects.filter(run=run).count() == kept, "the finished chunk is kept, nothing of the other"


def test_the_configuration_is_one_value_stored_once_and_read_back_for_the_job_page(
    reviews, eval_lm, client, admin_user
):
    """The run's configuration was written twice (the job's params and the run's columns) from ten
    keyword arguments passed three times; now the run's columns hold it and the page reads it back."""
    config = GemConfig(
        benchmark=reviews["benchmark"],
        candidates=[reviews["model"]],
        references=list(reversed(reviews["humans"])),
        variants=["gem-raw"],
        evaluation_lm=eval_lm,
        validation_strategies=["sentence_deletion"],
        seed=7,
    )
    run = do_create_gem_run(config, enqueue=False)
    assert run.job.params == {}
    assert GemConfig.of_run(GemRun.objects.get(pk=run.pk)) == config
    client.force_login(admin_user)
    page = client.get(f"/jobs/{run.job.pk}/").content.decode()
    assert "validation strategies</dt><dd>sentence_deletion</dd>" in page
    assert f"evaluation lm</dt><dd>{eval_lm}</dd>" in page


def test_a_frozen_configuration_cannot_change_after_it_was_checked(reviews, eval_lm):
    import dataclasses

    config = GemConfig(
        benchmark=reviews["benchmark"],
        candidates=[],
        references=reviews["humans"],
        variants=["gem-raw"],
        evaluation_lm=eval_lm,
    )
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.evaluation_lm = "openai:gpt-4o"  # type: ignore[misc]
    assert isinstance(config.references, tuple)
