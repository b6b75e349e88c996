"""Ask people until the corrected interval is narrow enough: batches, a look after each, and a stop
that says why."""

from __future__ import annotations

import threading

import pytest
from django.conf import settings

from evalhub.adjudication.actions import do_reserve_next, do_submit
from evalhub.core.files.judgments import DEFAULT_CRITERION
from evalhub.dashboards import label_requests
from evalhub.dashboards.baseline_win_rates import Selection
from evalhub.dashboards.label_requests import do_ask_until, do_continue_asking
from evalhub.dashboards.models import LabelRequest
from evalhub.debates.models import Debate, DebateStatus
from tests.conftest import make_user
from tests.dashboards.test_baseline_win_rates import BASELINE, JUDGE, imported  # noqa: F401
from tests.dashboards.test_corrected_win_rates import judged_and_labelled  # noqa: F401
from tests.worker_threads import WorkerThreads

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("judged_and_labelled")]
SELECTION = Selection("ae", JUDGE, BASELINE, DEFAULT_CRITERION)
MODEL = "claude-2-1"  # people labelled 20 of its 40 judged pairs: 20 are left to ask about


@pytest.fixture
def looks(monkeypatch):
    """The worker's look, run where the task would be enqueued; the run ids it was asked about."""
    asked: list[int] = []

    class Task:
        @staticmethod
        def delay(run_id: int) -> None:
            asked.append(run_id)
            do_continue_asking(run_id)

    monkeypatch.setattr(label_requests, "task_named", lambda name: Task)
    return asked


def label_batch(person, capture, count: int) -> None:
    """A person settles `count` pairs from the queue, through the adjudication screen's actions, always
    preferring the agents' first response: the screen shows a pair in a random order, and a person who
    always picked the one shown first made the labels, and these tests, a coin toss."""
    for _ in range(count):
        reservation = do_reserve_next(person)
        with capture(execute=True):
            do_submit(person, reservation.item_id, 2 if reservation.swapped else 1)


def test_a_look_after_each_batch_sends_the_next_until_the_budget_is_spent(
    admin_user, adjudicator, looks, django_capture_on_commit_callbacks
):
    request = do_ask_until(admin_user, SELECTION, MODEL, target=0.5, budget=10, batch=5, seed=3)
    first = request.last_run
    assert (request.sent, first.debates.count(), request.outcome) == (5, 5, LabelRequest.Outcome.ASKING)
    label_batch(adjudicator, django_capture_on_commit_callbacks, 5)
    request.refresh_from_db()
    # Every settled pair asks the worker to look (two last verdicts committed at once must not both see
    # the other's pair still waiting and ask nobody); it looks only once the whole batch is settled.
    assert looks == [first.pk] * 5 and request.looks == 1
    assert request.sent == 10 and request.last_run != first and request.half_width > 0.5
    label_batch(adjudicator, django_capture_on_commit_callbacks, 5)
    request.refresh_from_db()
    assert request.outcome == LabelRequest.Outcome.SPENT and request.looks == 2
    assert request.reason.startswith("10 pairs sent, still ± ") and "after 30 labels" in request.reason
    assert Debate.objects.filter(run__name__startswith="People's labels").count() == 10, "nothing past the budget"


def test_it_stops_by_itself_when_the_interval_is_within_the_target(
    admin_user, adjudicator, looks, django_capture_on_commit_callbacks
):
    # ± 46.0 after these 25 labels: each weighed by the labels before it (42.6 with one weight for all).
    request = do_ask_until(admin_user, SELECTION, MODEL, target=48, budget=20, batch=5, seed=4)
    label_batch(adjudicator, django_capture_on_commit_callbacks, 5)
    request.refresh_from_db()
    assert request.outcome == LabelRequest.Outcome.REACHED and request.sent == 5
    assert request.half_width <= 48 and request.reason.endswith("after 25 labels")
    assert request.finished_at is not None


def test_it_stops_when_no_unlabelled_pair_is_left_and_says_so(
    admin_user, adjudicator, looks, django_capture_on_commit_callbacks
):
    request = do_ask_until(admin_user, SELECTION, MODEL, target=0.5, budget=40, batch=15, seed=5)
    label_batch(adjudicator, django_capture_on_commit_callbacks, 15)
    request.refresh_from_db()
    assert request.sent == 20, "the second batch held the 5 pairs that were left"
    label_batch(adjudicator, django_capture_on_commit_callbacks, 5)
    request.refresh_from_db()
    assert request.outcome == LabelRequest.Outcome.EXHAUSTED
    assert "people already labelled every pair" in request.reason


def test_a_second_look_at_the_same_batch_sends_nothing_more(admin_user):
    request = do_ask_until(admin_user, SELECTION, MODEL, target=0.5, budget=15, batch=5, seed=6)
    first = request.last_run
    assert do_continue_asking(first.pk).looks == 0, "the batch waits for people: no look yet"
    Debate.objects.filter(run=first).update(status=DebateStatus.ADJUDICATED, winner="a", verdict=1)
    do_continue_asking(first.pk)
    do_continue_asking(first.pk)  # the task delivered twice, or two last verdicts at once
    request.refresh_from_db()
    assert (request.sent, request.looks) == (10, 1)


def test_the_page_asks_for_admins_only_refuses_bad_numbers_and_lists_each_request(admin_user, viewer, login):
    query = f"?judge={JUDGE}&baseline={BASELINE}"
    form = {"model": MODEL, "target": "3", "budget": "12", "batch": "4"}
    assert login(viewer).post(f"/leaderboards/baseline/ask-until/{query}", form).status_code == 403
    client = login(admin_user)
    refused = client.post(f"/leaderboards/baseline/ask-until/{query}", {**form, "batch": "50"}, follow=True)
    assert "a budget of at least a batch" in refused.content.decode() and not LabelRequest.objects.exists()
    response = client.post(f"/leaderboards/baseline/ask-until/{query}", form)
    assert response.status_code == 302 and response["Location"].endswith("#label-requests")
    page = client.get(f"/leaderboards/baseline/{query}").content.decode()
    assert 'id="ask-until"' in page and "Asked until narrow enough" in page and "4 · 12" in page


POSTGRES = settings.DATABASES["default"]["ENGINE"].endswith("postgresql")


@pytest.mark.skipif(not POSTGRES, reason="row locks are what is tested: run with DATABASE_URL=postgres://…")
@pytest.mark.django_db(transaction=True)
def test_two_last_verdicts_of_a_batch_at_once_send_exactly_one_next_batch(admin_user, looks):
    """Two people settle a batch's last two pairs at the same moment: each commit asks for a look, and
    the looks, under the request's row lock, send one next batch, not two and not none."""
    first_person, second_person = make_user("ana", "adjudicator"), make_user("ben", "adjudicator")
    request = do_ask_until(admin_user, SELECTION, MODEL, target=0.5, budget=8, batch=2, seed=7)
    for round_ in range(3):
        held = [do_reserve_next(first_person), do_reserve_next(second_person)]
        assert all(held), "each holds one of the batch's two pairs"
        start = threading.Barrier(2)

        def submit(person, reservation, barrier: threading.Barrier) -> None:
            barrier.wait()
            do_submit(person, reservation.item_id, 1)

        workers = WorkerThreads()
        for person, reservation in zip((first_person, second_person), held, strict=True):
            workers.start(submit, person, reservation, start)
        workers.join(60)
        request.refresh_from_db()
        assert (request.looks, request.sent) == (round_ + 1, 2 * (round_ + 2)), round_
        assert request.outcome == LabelRequest.Outcome.ASKING
        assert Debate.objects.filter(run=request.last_run).count() == 2
