"""The run commands show a job's progress on a terminal (units done of total, moving as the chunks
record them, not only at the end) and nothing when their output is not a terminal; a job started
anywhere is followed to its end by `follow_job` or a command's `--follow`."""

from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from evalhub.jobs import cli
from evalhub.jobs.chunks import pending_chunk_ids
from evalhub.jobs.models import Job, JobStatus
from evalhub.jobs.runners import work_chunk
from tests.jobs.test_a_new_kind import WordCountConfig, responses, sent, word_count  # noqa: F401

pytestmark = pytest.mark.django_db


def test_working_a_job_here_draws_its_progress_as_each_chunk_records_it(word_count, responses):  # noqa: F811
    job = word_count.create(WordCountConfig(responses), size=2, enqueue=False)
    shown = io.StringIO()
    done = cli.work_here(job, shown=True, stream=shown)
    assert done.status == JobStatus.SUCCEEDED
    drawn = shown.getvalue()
    assert "2/6" in drawn and "4/6" in drawn and "6/6" in drawn, drawn
    assert "Succeeded" in drawn


def test_nothing_is_drawn_when_the_output_is_not_a_terminal(word_count, responses):  # noqa: F811
    job = word_count.create(WordCountConfig(responses), size=2, enqueue=False)
    quiet = io.StringIO()  # not a terminal
    assert cli.work_here(job, stream=quiet).status == JobStatus.SUCCEEDED
    assert quiet.getvalue() == ""


def test_following_a_job_worked_elsewhere_reads_it_until_it_ends(word_count, responses, monkeypatch):  # noqa: F811
    job = word_count.create(WordCountConfig(responses), size=2, enqueue=False)
    chunks = iter(pending_chunk_ids(job))
    # Each wait of the follower is one chunk worked "elsewhere": no race with a real worker.
    monkeypatch.setattr(cli.time, "sleep", lambda seconds: work_chunk(next(chunks)))
    shown = io.StringIO()
    done = cli.follow(job, poll=0.01, shown=True, stream=shown)
    assert done.status == JobStatus.SUCCEEDED and "6/6" in shown.getvalue()


def test_following_a_paused_job_stops_there_and_says_so(capsys):
    paused = Job.objects.create(kind="nobody", title="held", status=JobStatus.PAUSED, message="Paused by ada")
    call_command("follow_job", str(paused.pk), "--poll", "0")  # ends at once: nothing moves a paused job
    assert "Paused" in capsys.readouterr().out


def test_follow_job_ends_with_the_jobs_state(word_count, responses, capsys):  # noqa: F811
    failed = Job.objects.create(kind="nobody", title="broken", status=JobStatus.FAILED, message="it broke")
    with pytest.raises(CommandError, match="Job .* \\(broken\\): Failed. it broke"):
        call_command("follow_job", str(failed.pk))
    job = word_count.create(WordCountConfig(responses), size=6, enqueue=False)
    cli.work_here(job)
    call_command("follow_job", str(job.pk))
    assert "Succeeded" in capsys.readouterr().out
    with pytest.raises(CommandError, match="no job 9999"):
        call_command("follow_job", "9999")


@pytest.mark.django_db(transaction=True)  # the queued chunks are sent (and worked eagerly) once it commits
def test_a_queued_run_is_followed_to_its_end_with_follow(capsys):
    from evalhub.catalog.demo import do_load_demo

    do_load_demo()
    arguments = ["--benchmark", "demo", "--criterion", "helpfulness", "--model-a", "demo-thorough"]
    arguments += ["--model-b", "demo-terse", "--agent", "heuristic", "--agent", "heuristic:reference"]
    call_command("run_debates", *arguments, "--enqueue", "--follow")
    out = capsys.readouterr().out
    assert "Queued run" in out and "Succeeded" in out
