from __future__ import annotations

from typing import Any

from celery import shared_task

from evalhub.core.statistics.estimators import Correction
from evalhub.judgelab.report import BOARDS_TASK, REFRESH_TASK, refresh_corrected_boards, refresh_report
from evalhub.reads.judged_pairs import Scope


@shared_task(name=REFRESH_TASK, ignore_result=True)
def refresh_report_task(*fields: Any, scope: dict[str, Any] | None = None) -> None:
    """`scope`: every field of the report's Scope (the page asks for the scope it shows, train pairs
    included: the background refresh once dropped them, and that report was never refreshed). A message
    queued by the earlier form (the first four fields, in order) is still read."""
    if scope is not None:
        scope.pop("estimator", None)  # queued when the estimator was part of the scope: its report is this one
    # The earlier form's fields were benchmark, criterion, people and the estimator, in order.
    refresh_report(Scope(**scope) if scope is not None else Scope(*fields[:3]))


@shared_task(name=BOARDS_TASK, ignore_result=True)
def refresh_corrected_boards_task(*, scope: dict[str, Any], estimator: str) -> None:
    """The scope's corrected boards by `estimator`, kept apart from its report."""
    refresh_corrected_boards(Scope(**scope), Correction(estimator))
