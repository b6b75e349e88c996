"""One run, one state, the same words everywhere: home, lists, run page and job page."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from evalhub.debates.actions import do_start_run
from evalhub.jobs.models import Job, JobStatus

pytestmark = pytest.mark.django_db

BADGE = re.compile(r'<span class="badge [^"]*" data-status="(?P<status>[a-z]+)">(?P<words>[^<]+)</span>')

CASES = {
    "succeeded": ({"status": JobStatus.SUCCEEDED}, "Succeeded"),
    "partial": (
        {"status": JobStatus.PARTIAL, "units_failed": 3, "units_invalid": 2},
        "Finished with 3 failed / 2 invalid",
    ),
    "failed": ({"status": JobStatus.FAILED, "message": "Agent heuristic:x failed every call: boom"}, "Failed"),
    "cancelled": ({"status": JobStatus.CANCELLED}, "Cancelled"),
    # Between the click and the chunk in hand stopping, every page said something else.
    "pausing": ({"status": JobStatus.RUNNING, "requested": "pause"}, "Pausing…"),
    "paused": ({"status": JobStatus.PAUSED, "requested": "pause"}, "Paused"),
    "resumed": ({"status": JobStatus.QUEUED, "started_at": timezone.now()}, "Queued to resume"),
}


def badges(html: str) -> set[tuple[str, str]]:
    return {(m["status"], m["words"]) for m in BADGE.finditer(html)}


@pytest.mark.parametrize("state", list(CASES))
def test_a_run_shows_the_same_status_words_on_every_page(state, make_run, login, admin_user):
    fields, words = CASES[state]
    run = do_start_run(make_run(), enqueue=False)
    Job.objects.filter(pk=run.job_id).update(**fields)
    client = login(admin_user)
    pages = {
        "home": "/",
        "debate list": "/debates/",
        "job list": "/jobs/",
        "run page": run.get_absolute_url(),
        "job page": f"/jobs/{run.job_id}/",
    }
    for page, url in pages.items():
        shown = badges(client.get(url).content.decode())
        assert (fields["status"], words) in shown, f"{page} shows {shown}"
        assert not any(status == fields["status"] and w != words for status, w in shown), page


def test_a_failed_run_states_its_cause_in_one_sentence_at_the_top_of_its_pages(make_run, login, admin_user):
    run = do_start_run(make_run(), enqueue=False)
    cause = "Agent heuristic:x failed every call: boom"
    Job.objects.filter(pk=run.job_id).update(status=JobStatus.FAILED, message=cause, error=cause)
    client = login(admin_user)
    for url in (run.get_absolute_url(), f"/jobs/{run.job_id}/"):
        assert f'<p class="error"><strong>{cause}</strong></p>' in client.get(url).content.decode()


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (JobStatus.QUEUED, ["Pause", "Cancel"]),
        (JobStatus.RUNNING, ["Pause", "Cancel"]),
        (JobStatus.PAUSED, ["Cancel", "Resume"]),  # a paused run can still be ended
        (JobStatus.CANCELLED, ["Resume"]),
        (JobStatus.SUCCEEDED, []),
    ],
)
def test_controls_appear_only_where_they_apply(status, expected, make_run, login, admin_user):
    run = do_start_run(make_run(), enqueue=False)
    Job.objects.filter(pk=run.job_id).update(status=status)
    html = login(admin_user).get(f"/jobs/{run.job_id}/controls/").content.decode()
    shown = re.findall(r"<button[^>]*>([^<]+)</button>", html)
    assert shown == expected


def test_a_viewer_sees_no_controls_and_cannot_pause(make_run, login, viewer):
    run = do_start_run(make_run(), enqueue=False)
    client = login(viewer)
    assert "<button" not in client.get(f"/jobs/{run.job_id}/controls/").content.decode()
    assert client.post(f"/jobs/{run.job_id}/pause/").status_code == 403
    assert Job.objects.get(pk=run.job_id).requested == ""


def test_after_cancel_the_debates_that_never_ran_say_so_not_waiting_to_start(make_run, login, admin_user):
    from evalhub.jobs.actions import do_request_stop

    run = do_start_run(make_run(), enqueue=False)
    do_request_stop(run.job, "cancel")
    page = login(admin_user).get(run.get_absolute_url()).content.decode()
    assert page.count("Not run (run cancelled)") == run.debates.count()
    assert ">Pending<" not in page


def test_claiming_a_batch_sends_the_run_summary_with_its_running_count(make_run, monkeypatch):
    from evalhub.debates import actions

    sent = []
    monkeypatch.setattr(
        actions, "broadcast_html", lambda group, html: sent.append((group, html() if callable(html) else html))
    )
    run = do_start_run(make_run(), enqueue=False)
    sent.clear()
    actions.do_claim_debates(list(run.debates.values_list("id", flat=True)))
    summary = next(html for group, html in sent if group == f"run.{run.pk}" and "run-summary" in html)
    assert f'<span class="badge running">{run.debates.count()}</span> running' in summary


def test_a_running_job_nobody_works_on_says_so_and_offers_resume_and_cancel(make_run, login, admin_user):
    from datetime import timedelta

    from django.utils import timezone

    run = do_start_run(make_run(), enqueue=False)
    Job.objects.filter(pk=run.job_id).update(status=JobStatus.RUNNING, started_at=timezone.now() - timedelta(minutes=5))
    run.job.chunks.update(heartbeat_at=timezone.now() - timedelta(minutes=4), attempts=1)
    # The page notices (and sends the lost chunk back to the queue), then offers what applies.
    client = login(admin_user)
    assert client.get(f"/jobs/{run.job_id}/").status_code == 200
    html = client.get(f"/jobs/{run.job_id}/controls/").content.decode()
    assert "No worker is working on this job now" in html
    assert re.findall(r"<button[^>]*>([^<]+)</button>", html) == ["Pause", "Cancel", "Resume"]


def test_a_queued_job_no_worker_has_taken_says_no_worker_is_listening(make_run, login, admin_user):
    """A job queued while no worker runs (or after the broker lost them) waited 'Queued' in silence."""
    from datetime import timedelta

    from django.utils import timezone

    run = do_start_run(make_run(), enqueue=False)
    Job.objects.filter(pk=run.job_id).update(created_at=timezone.now() - timedelta(minutes=2))
    html = login(admin_user).get(f"/jobs/{run.job_id}/controls/").content.decode()
    assert "No worker has taken this job since it was queued" in html
    assert "no worker is listening on its queue" in html
