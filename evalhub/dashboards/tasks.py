"""The boards' background work: thin Celery adapters, enqueued by name (evalhub.celery.task_named)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from evalhub.dashboards.baseline_win_rates import REFIT_TASK, Selection, refit
from evalhub.dashboards.label_requests import CONTINUE_TASK, do_continue_asking


@shared_task(name=REFIT_TASK, ignore_result=True)
def refit_baseline_task(selection: dict[str, Any]) -> None:
    refit(Selection(**selection))


@shared_task(name=CONTINUE_TASK, ignore_result=True)
def continue_asking_task(run_id: int) -> None:
    do_continue_asking(run_id)
