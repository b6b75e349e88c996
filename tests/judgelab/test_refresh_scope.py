"""The judge lab's background refresh carries the whole scope it is asked for (issue 79): every field,
train pairs included, reaches the worker, which refreshes that very report."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from evalhub.core.statistics.estimators import AUTO, Correction, choices
from evalhub.judgelab import report as lab
from evalhub.judgelab.tasks import refresh_corrected_boards_task, refresh_report_task
from evalhub.reads.judged_pairs import AFTER_REVEAL, BLIND, Scope

pytestmark = pytest.mark.django_db

SCOPES = [
    Scope(benchmark=benchmark, criterion="", people=people, train_pairs=train)
    for benchmark, people, train in itertools.product(("", "bench"), (BLIND, AFTER_REVEAL), (False, True))
]
ESTIMATORS = [name for name, _ in choices() if name != AUTO]


class Sent:
    def __init__(self) -> None:
        self.messages: list[dict] = []

    def apply_async(self, args=(), kwargs=None) -> None:
        self.messages.append({"args": list(args), "kwargs": dict(kwargs or {})})


@pytest.mark.parametrize("scope", SCOPES, ids=lambda s: s.key or "all")
def test_every_scope_asked_for_is_the_scope_the_worker_refreshes(scope, monkeypatch):
    sent = Sent()
    monkeypatch.setattr(lab, "task_named", lambda name: sent)
    assert lab._ask_for_refresh(scope)
    (message,) = sent.messages
    refreshed = []
    monkeypatch.setattr("evalhub.judgelab.tasks.refresh_report", refreshed.append)
    refresh_report_task(*message["args"], **message["kwargs"])
    assert refreshed == [scope]
    assert dataclasses.asdict(refreshed[0]) == dataclasses.asdict(scope)


def test_a_message_of_the_earlier_form_is_still_read(monkeypatch):
    refreshed = []
    monkeypatch.setattr("evalhub.judgelab.tasks.refresh_report", refreshed.append)
    refresh_report_task("bench", "overall", BLIND, AUTO)
    assert refreshed == [Scope(benchmark="bench", criterion="overall")]


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("scope", SCOPES[::3], ids=lambda s: s.key or "all")
def test_every_estimator_asked_for_reaches_the_worker_of_the_boards_with_its_scope(scope, estimator, monkeypatch):
    sent = Sent()
    monkeypatch.setattr(lab, "task_named", lambda name: sent)
    assert lab._ask_for_boards(scope, Correction(estimator))
    (message,) = sent.messages
    refreshed = []
    monkeypatch.setattr("evalhub.judgelab.tasks.refresh_corrected_boards", lambda *given: refreshed.append(given))
    refresh_corrected_boards_task(*message["args"], **message["kwargs"])
    assert refreshed == [(scope, Correction(estimator))]


def test_a_refresh_queued_with_the_estimator_in_its_scope_refreshes_the_scope_alone(monkeypatch):
    """Queued before the estimator left the scope (a deploy with messages in the broker)."""
    refreshed = []
    monkeypatch.setattr("evalhub.judgelab.tasks.refresh_report", refreshed.append)
    refresh_report_task(scope={"benchmark": "bench", "criterion": "", "people": BLIND, "estimator": "ppi++"})
    assert refreshed == [Scope(benchmark="bench")]
