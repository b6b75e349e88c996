from __future__ import annotations

from typing import Any

from celery import shared_task

from evalhub.judgelab.report import REFRESH_TASK, refresh_report
from evalhub.reads.judged_pairs import Scope


@shared_task(name=REFRESH_TASK, ignore_result=True)
def refresh_report_task(*fields: Any, scope: dict[str, Any] | None = None) -> None:
    """`scope`: every field of the report's Scope (the page asks for the scope it shows, train pairs
    included: the background refresh once dropped them, and that report was never refreshed). A message
    queued by the earlier form (the first four fields, in order) is still read."""
    refresh_report(Scope(**scope) if scope is not None else Scope(*fields))
