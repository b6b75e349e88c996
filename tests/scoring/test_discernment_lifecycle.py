"""A DHP run's life as a job: stopped between calls, resumed to the same result, failed by name."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from evalhub.jobs.actions import do_request_stop
from evalhub.jobs.chunks import do_requeue_stalled_chunks, do_resume_job
from evalhub.jobs.models import Job, JobChunk, JobStatus
from evalhub.jobs.runners import work_chunk
from evalhub.llm.testing import FakeLLMServer
from evalhub.scoring.models import JudgeScore
from evalhub.worklog.models import RowIssue
from tests.jobs.helpers import stop_once_calls_flow
from tests.scoring.test_discernment import dhp_run, judge_reply, run_all, spec


def fresh_judge(server, like: str) -> str:
    """A judge answering like `like` under a name no earlier test used, so no answer comes from the cache."""
    name = f"{like}-{uuid.uuid4().hex[:8]}"
    server.state.reply_for_model = lambda model, messages: judge_reply(model.rsplit("-", 1)[0], messages)
    return spec(server, name)


def scores_of(run) -> list[tuple]:
    rows = JudgeScore.objects.filter(run=run).values_list("judge", "response__text", "metric", "repeat", "score")
    return sorted((judge.split("|")[-1], text, metric, repeat, score) for judge, text, metric, repeat, score in rows)


def test_a_judge_that_failed_every_call_fails_the_run_naming_it_with_its_first_error(summaries, server, login, viewer):
    with FakeLLMServer(reply_for_model=judge_reply, api_key="another-key") as locked_out:
        down = f"openai-compatible:{locked_out.url}/v1|perfect"
        run = dhp_run(summaries, [spec(server, "perfect"), down], repeats=1)
        run_all(run)
    job = Job.objects.get(pk=run.job_id)
    assert job.status == JobStatus.FAILED
    assert job.message.startswith(f"Judge {down} failed every call:")
    assert "401" in job.message or "rejected" in job.message.lower() or "key" in job.message.lower()
    # The judge that worked is kept and shown; the failed one's calls are each a reported row.
    assert JudgeScore.objects.filter(run=run, judge=spec(server, "perfect")).count() > 0
    assert job.units_failed == RowIssue.objects.filter(job=job, stage="judging").count() > 0
    # Its own card on the results page says so, beside the working judge's table.
    page = login(viewer).get(f"/scoring/discernment/{run.job_id}/results/").content.decode()
    failed_card = page.split(f"<h2>{down}", 1)[1].split("</div>", 1)[0]
    assert '<span class="badge failed">Failed</span>' in failed_card
    assert "401" in failed_card


def test_a_judge_whose_every_answer_is_unreadable_fails_the_run_naming_it(summaries, server):
    run = dhp_run(summaries, [spec(server, "perfect"), spec(server, "broken")], repeats=1)
    run_all(run)
    job = Job.objects.get(pk=run.job_id)
    assert job.status == JobStatus.FAILED
    assert job.message.startswith(f"Judge {spec(server, 'broken')} failed every call: none of its")
    assert "'no idea'" in job.message


def test_one_unreadable_answer_among_many_leaves_the_run_partial_with_the_count(summaries, server, monkeypatch):
    calls = {"n": 0}

    def mostly_perfect(model, messages):
        calls["n"] += 1
        return "no idea" if calls["n"] == 1 else judge_reply("perfect", messages)

    server.state.reply_for_model = mostly_perfect
    run = dhp_run(summaries, [spec(server, "perfect")], repeats=1)
    run_all(run)
    job = Job.objects.get(pk=run.job_id)
    # The first answer is re-asked once (and read); so nothing invalid, and every call produced a score.
    assert job.status == JobStatus.SUCCEEDED
    assert job.status_words == "Succeeded"


@pytest.mark.django_db(transaction=True)
@override_settings(EVALHUB_HEARTBEAT_SECONDS=0.05)
def test_cancel_mid_chunk_stops_between_calls_keeps_the_finished_chunk_and_writes_nothing_half(summaries, server):
    server.state.latency_s = 0.05
    run = dhp_run(summaries, [fresh_judge(server, "perfect")], repeats=3, chunk_prompts=6)
    first, second = run.job.chunks.order_by("index")
    assert work_chunk(first.pk) == "recorded"
    kept = JudgeScore.objects.filter(run=run).count()
    sent_before = server.request_count

    canceller = stop_once_calls_flow(server, run.job_id, "cancel", after=sent_before + 8)
    outcome = work_chunk(second.pk)
    canceller.join()
    job = Job.objects.get(pk=run.job_id)
    assert outcome == "cancel"
    assert job.status == JobStatus.CANCELLED
    assert job.message.startswith("Cancelled: ")
    assert "are kept" in job.message
    assert JudgeScore.objects.filter(run=run).count() == kept, "the stopped chunk wrote nothing"
    planned_second = 6 * 3 * 2 * 3  # responses × (original + 2 copies) × metrics × repeats
    assert server.request_count - sent_before < planned_second / 2, "no call started long after the cancel"
    assert JobChunk.objects.get(pk=second.pk).done_at is None


@pytest.mark.django_db(transaction=True)
@override_settings(EVALHUB_HEARTBEAT_SECONDS=0.05)
def test_a_paused_run_resumes_to_the_same_scores_as_an_uninterrupted_run(summaries, server):
    server.state.latency_s = 0.02
    judge = fresh_judge(server, "coin")
    paused = dhp_run(summaries, [judge], repeats=2, chunk_prompts=6)

    pauser = stop_once_calls_flow(server, paused.job_id, "pause", after=5)
    statuses = run_all(paused)
    pauser.join()
    job = Job.objects.get(pk=paused.job_id)
    assert statuses[0] == "pause"
    assert job.status == JobStatus.PAUSED
    assert job.can_resume
    assert not job.can_stop

    do_resume_job(job)  # tasks run eagerly in tests: the rest runs now
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED

    straight = dhp_run(summaries, [judge], repeats=2, chunk_prompts=6)
    run_all(straight)
    assert scores_of(paused) == scores_of(straight)
    assert job.result["dhp"] == Job.objects.get(pk=straight.job_id).result["dhp"]


def test_a_chunk_whose_worker_stopped_beating_goes_back_to_the_queue_once(summaries, server, monkeypatch):
    from evalhub.jobs.tasks import chunk_task

    run = dhp_run(summaries, [spec(server, "perfect")], repeats=1, chunk_prompts=6)
    first, second = run.job.chunks.order_by("index")
    long_ago = timezone.now() - timedelta(minutes=5)
    Job.objects.filter(pk=run.job_id).update(status=JobStatus.RUNNING)
    JobChunk.objects.filter(pk=first.pk).update(heartbeat_at=long_ago, attempts=1, worker="dead:1:1")
    JobChunk.objects.filter(pk=second.pk).update(heartbeat_at=timezone.now(), attempts=1, worker="alive:2:1")
    sent = []
    monkeypatch.setattr(chunk_task, "apply_async", lambda args, queue: sent.append((args, queue)))
    with pytest.MonkeyPatch.context():
        from django.db import transaction

        with transaction.atomic():
            assert do_requeue_stalled_chunks() == 1
        assert do_requeue_stalled_chunks() == 0, "a second watchdog finds nothing to take"
    first.refresh_from_db()
    assert (first.heartbeat_at, first.worker) == (None, "")
    job = Job.objects.get(pk=run.job_id)
    assert "Chunk 1: its worker stopped answering" in job.message


def test_cancel_on_a_job_whose_workers_are_gone_settles_at_once(summaries, server):
    run = dhp_run(summaries, [spec(server, "perfect")], repeats=1, chunk_prompts=6)
    Job.objects.filter(pk=run.job_id).update(status=JobStatus.RUNNING)
    run.job.chunks.update(heartbeat_at=timezone.now() - timedelta(minutes=10), attempts=1)
    job = do_request_stop(Job.objects.get(pk=run.job_id), "cancel")
    assert job.status == JobStatus.CANCELLED, "nobody is left to see the request: it is settled now"
    assert job.stalled_since() is None


def test_the_job_counts_every_call_of_the_run_judges_and_perturbation_llm_alike(summaries, server):
    renamer = f"renamer-{uuid.uuid4().hex[:8]}"
    judge = fresh_judge(server, "perfect")  # answers for renamer-… too: the model name's prefix decides
    before = server.request_count
    run = dhp_run(
        summaries,
        [judge],
        perturbations=[["fictional_named_entities", "minor"]],
        perturbation_lm=spec(server, renamer),
        repeats=1,
    )
    run_all(run)
    usage = Job.objects.get(pk=run.job_id).usage_value
    sent = server.request_count - before
    assert usage.calls - usage.cached_calls == sent, "every call that reached the provider is counted once"
    rewrites = sum(1 for r in server.state.requests[before:] if renamer in str(r["body"].get("model")))
    assert rewrites == 12, "the perturbation LLM's calls and the judge's"
    assert sent > rewrites, "the perturbation LLM's calls and the judge's"
    assert usage.input_tokens > 0
    assert usage.output_tokens > 0
