"""A sixth kind of long work takes one class and one registration, and gets the rest for free:
progress, pause and cancel between units, resume of exactly what is left, stall recovery, one task
for every kind, and the job page with its controls."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.test import override_settings
from django.utils import timezone

from evalhub.catalog.models import Benchmark, LanguageModel, Prompt, Response
from evalhub.core.runs.outcomes import Outcome
from evalhub.jobs import kinds
from evalhub.jobs.actions import do_request_stop
from evalhub.jobs.chunks import Settled, do_requeue_stalled_chunks, do_resume_job
from evalhub.jobs.config import RunConfig
from evalhub.jobs.models import Job, JobChunk, JobStatus
from evalhub.jobs.runners import JobRunner, Plan, work_chunk
from evalhub.llm import interrupt
from evalhub.llm.accounting import UsageMeter, record_everywhere
from evalhub.llm.types import Completion

pytestmark = pytest.mark.django_db
KIND = "word_count"


@dataclass(frozen=True)
class WordCountConfig(RunConfig):
    response_ids: Sequence[int]

    def errors(self) -> list[str]:
        return [] if self.response_ids else ["Choose the responses to count."]

    def shown(self) -> dict[str, Any]:
        return {"responses": len(self.response_ids)}


class WordCount(JobRunner[Job, dict[int, int]]):
    """Counts the words of responses (the job is its own run: its params hold the configuration)."""

    kind = KIND
    config = WordCountConfig
    size = 3  # responses per chunk

    @classmethod
    def plan(cls, config: WordCountConfig, run: None, size: int | None) -> Plan:
        return Plan("Count words", config.response_ids, size or cls.size)

    pause_after_first = False  # a test asks for a pause once the first unit is counted
    fail_after_a_paid_call: str | None = None  # a test: one paid call, then "fail" (an error) or "cancel"

    def work(self, chunk: JobChunk) -> dict[int, int]:
        if stop := WordCount.fail_after_a_paid_call:
            WordCount.fail_after_a_paid_call = None
            record_everywhere(UsageMeter(), Completion("x", "fake", "m", input_tokens=5, output_tokens=3))
            if stop == "fail":
                raise RuntimeError("the worker fell over after a paid call")
            raise interrupt.Interrupted("cancel")
        counts: dict[int, int] = {}
        for response in Response.objects.filter(pk__in=chunk.unit_ids).order_by("pk"):
            interrupt.check()  # between units, as every model call does
            counts[response.pk] = len(response.text.split())
            if WordCount.pause_after_first:
                WordCount.pause_after_first = False
                do_request_stop(self.run, "pause")
                deadline = time.monotonic() + 10
                while time.monotonic() < deadline:  # the heartbeat reads the request: the next check stops
                    interrupt.check()
                    time.sleep(0.02)
        return counts

    def write(self, chunk: JobChunk, result: dict[int, int]) -> int:
        responses = list(Response.objects.filter(pk__in=result))
        for response in responses:
            response.metadata = {**response.metadata, "words": result[response.pk]}
        Response.objects.bulk_update(responses, ["metadata"])
        return 0

    def finish(self, job: Job) -> Settled:
        counted = Response.objects.filter(pk__in=_ids(job), metadata__has_key="words")
        total = sum(r.metadata["words"] for r in counted)
        outcome = Outcome(planned=job.progress_total, produced=counted.count())
        return Settled(f"{total} words in {counted.count()} responses.", {"words": total}, outcome)


def _ids(job: Job) -> list[int]:
    return [i for chunk in job.chunks.all() for i in chunk.unit_ids]


@pytest.fixture
def word_count():
    kinds.register(KIND, f"{__name__}:WordCount")
    yield WordCount
    kinds.unregister(KIND)


@pytest.fixture
def responses(db) -> list[int]:
    benchmark = Benchmark.objects.create(slug="words", name="Words")
    model = LanguageModel.objects.create(slug="m", display_name="M")
    ids = []
    for n in range(6):
        prompt = Prompt.objects.create(benchmark=benchmark, external_id=f"p{n}", text=f"prompt {n}")
        ids.append(Response.objects.create(prompt=prompt, model=model, text=" ".join(["word"] * (n + 1))).pk)
    return ids


@pytest.fixture
def sent(monkeypatch) -> list[tuple[list[int], str]]:
    """What was queued: the one task for every kind, with the kind's queue."""
    from evalhub.jobs.tasks import chunk_task

    queued: list[tuple[list[int], str]] = []
    monkeypatch.setattr(chunk_task, "apply_async", lambda args, queue: queued.append((args, queue)))
    return queued


def test_a_new_kind_is_queued_worked_and_settled_by_the_shared_engine(
    word_count, responses, sent, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        job = word_count.create(WordCountConfig(responses), size=2)
    assert job.kind == KIND and job.progress_total == 6 and job.chunks.count() == 3
    assert sorted(args[0] for args, _ in sent) == sorted(job.chunks.values_list("pk", flat=True))
    assert {queue for _, queue in sent} == {"default"}
    first, *rest = job.chunks.order_by("index")
    assert work_chunk(first.pk) == "recorded"
    job.refresh_from_db()
    assert (job.progress_done, job.message) == (2, "2 of 6 done")
    assert work_chunk(first.pk) == "done", "a second delivery writes nothing twice"
    for chunk in rest:
        assert work_chunk(chunk.pk) == "recorded"
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED
    assert job.message == "21 words in 6 responses." and job.result == {"words": 21}


@override_settings(EVALHUB_HEARTBEAT_SECONDS=0.05)
@pytest.mark.django_db(transaction=True)  # the heartbeat thread reads the pause through its own connection
def test_a_new_kind_pauses_between_units_and_resumes_exactly_what_is_left(
    word_count, responses, sent, django_capture_on_commit_callbacks
):
    job = word_count.create(WordCountConfig(responses), size=3, enqueue=False)
    first, second = job.chunks.order_by("index")
    WordCount.pause_after_first = True
    assert work_chunk(first.pk) == "pause"
    job.refresh_from_db()
    assert job.status == JobStatus.PAUSED
    assert not Response.objects.filter(metadata__has_key="words").exists(), "a stopped chunk records nothing"
    with django_capture_on_commit_callbacks(execute=True):
        do_resume_job(job)
    assert sorted(args[0] for args, _ in sent) == [first.pk, second.pk]
    assert [work_chunk(first.pk), work_chunk(second.pk)] == ["recorded", "recorded"]
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED and job.result == {"words": 21}


def test_a_new_kind_is_cancelled_and_a_lost_chunk_goes_back_to_the_queue(word_count, responses, sent, settings):
    job = word_count.create(WordCountConfig(responses), size=3, enqueue=False)
    first, second = job.chunks.order_by("index")
    # A worker took the first chunk and died: its heartbeat stopped long ago.
    long_ago = timezone.now() - timedelta(seconds=settings.EVALHUB_STALL_SECONDS + 60)
    JobChunk.objects.filter(pk=first.pk).update(heartbeat_at=long_ago, worker="gone:1:1", attempts=1)
    Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING)
    assert do_requeue_stalled_chunks(job) == 1
    assert "its worker stopped answering" in Job.objects.get(pk=job.pk).message
    assert work_chunk(first.pk) == "recorded", "the requeued chunk runs again"
    do_request_stop(Job.objects.get(pk=job.pk), "cancel")
    assert work_chunk(second.pk) == "cancelled", "no chunk in hand: the job settles as cancelled at once"
    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED
    assert Response.objects.filter(metadata__has_key="words").count() == 3


def test_a_new_kind_has_the_job_page_and_its_controls(word_count, responses, login, admin_user):
    job = word_count.create(WordCountConfig(responses), size=3, enqueue=False)
    do_request_stop(job, "pause")
    work_chunk(job.chunks.order_by("index").first().pk)
    client = login(admin_user)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert "Count words" in page
    controls = client.get(f"/jobs/{job.pk}/controls/").content.decode()
    assert "Resume" in controls, "a kind with a run (here the job itself) can be resumed"


def test_a_paused_job_can_be_cancelled_and_resume_answers_where_it_was_pressed(
    word_count, responses, sent, login, admin_user
):
    job = word_count.create(WordCountConfig(responses), size=3, enqueue=False)
    do_request_stop(job, "pause")
    job.refresh_from_db()
    assert job.status == JobStatus.PAUSED
    client = login(admin_user)
    controls = client.get(f"/jobs/{job.pk}/controls/").content.decode()
    assert "Cancel" in controls and "Pause" not in controls
    # Resume from a page that embeds the card (a debate run's) answers with the card, not a redirect.
    resumed = client.post(f"/jobs/{job.pk}/resume/", HTTP_HX_REQUEST="true")
    assert resumed.status_code == 200 and 'id="job-status"' in resumed.content.decode()
    assert client.post(f"/jobs/{job.pk}/resume/").status_code == 302, "without htmx: the job page, as before"
    do_request_stop(Job.objects.get(pk=job.pk), "pause")
    cancelled = client.post(f"/jobs/{job.pk}/cancel/", HTTP_HX_REQUEST="true")
    assert cancelled.status_code == 200 and "Cancelled" in cancelled.content.decode()
    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED and job.finished_at is not None


def test_a_kind_nobody_registered_is_named_when_its_chunk_comes():
    job = Job.objects.create(kind="nobody", title="?")
    chunk = JobChunk.objects.create(job=job, index=0, unit_ids=[1])
    with pytest.raises(LookupError, match="kind 'nobody', which no app registered"):
        work_chunk(chunk.pk)


def test_a_registration_whose_class_names_another_kind_is_refused():
    kinds.register("counting", f"{__name__}:WordCount")
    try:
        with pytest.raises(LookupError, match="says its kind is 'word_count', registered as 'counting'"):
            kinds.runner_for("counting")
    finally:
        kinds.unregister("counting")


def test_opening_a_job_page_writes_nothing_and_its_check_sends_a_lost_chunk_back(
    word_count, responses, sent, login, viewer, settings, django_capture_on_commit_callbacks
):
    job = word_count.create(WordCountConfig(responses), size=3, enqueue=False)
    first = job.chunks.order_by("index").first()
    long_ago = timezone.now() - timedelta(seconds=settings.EVALHUB_STALL_SECONDS + 60)
    JobChunk.objects.filter(pk=first.pk).update(heartbeat_at=long_ago, worker="gone:1:1", attempts=1)
    Job.objects.filter(pk=job.pk).update(status=JobStatus.RUNNING)
    client = login(viewer)
    page = client.get(f"/jobs/{job.pk}/").content.decode()
    assert JobChunk.objects.get(pk=first.pk).heartbeat_at == long_ago, "a GET changes nothing"
    assert f'hx-post="/jobs/{job.pk}/check/"' in page, "the page asks for the check as it opens"
    assert client.get(f"/jobs/{job.pk}/check/").status_code == 405
    with django_capture_on_commit_callbacks(execute=True):
        checked = client.post(f"/jobs/{job.pk}/check/")
    assert checked.status_code == 200 and "its worker stopped answering" in checked.content.decode()
    assert JobChunk.objects.get(pk=first.pk).heartbeat_at is None
    assert [args[0] for args, _ in sent] == [first.pk]


def test_a_kinds_summary_longer_than_the_message_column_is_cut_not_refused(
    word_count, responses, monkeypatch, django_capture_on_commit_callbacks
):
    """PostgreSQL refused the whole settlement (value too long) where SQLite stored the text whole."""
    long = "word " * 200
    monkeypatch.setattr(WordCount, "finish", lambda self, job: Settled(long, {}, Outcome(planned=1, produced=1)))
    with django_capture_on_commit_callbacks(execute=True):
        job = word_count.create(WordCountConfig(responses[:1]), size=1)
    work_chunk(job.chunks.get().pk)
    job.refresh_from_db()
    assert job.status == JobStatus.SUCCEEDED
    assert len(job.message) == Job._meta.get_field("message").max_length
    assert job.message.endswith("word…")


@pytest.mark.django_db(transaction=True)  # a stopped chunk closes its connection, as a worker does
@pytest.mark.parametrize("stop", ["fail", "cancel"])
def test_the_calls_of_a_chunk_that_failed_or_stopped_are_added_to_the_jobs_usage(word_count, responses, sent, stop):
    """They were paid for; only a recorded chunk's calls were counted."""
    job = word_count.create(WordCountConfig(responses), size=6, enqueue=False)
    WordCount.fail_after_a_paid_call = stop
    if stop == "fail":
        with pytest.raises(RuntimeError):
            work_chunk(job.chunks.get().pk)
    else:
        assert work_chunk(job.chunks.get().pk) == "cancel"
    usage = Job.objects.get(pk=job.pk).usage_value
    assert (usage.calls, usage.input_tokens, usage.output_tokens) == (1, 5, 3)
