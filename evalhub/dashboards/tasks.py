"""The boards' background work: thin Celery adapters, enqueued by name (evalhub.celery.task_named)."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from evalhub.core.statistics.estimators import Correction
from evalhub.dashboards import pairwise, pairwise_html
from evalhub.dashboards.baseline_win_rates import Selection
from evalhub.dashboards.label_requests import CONTINUE_TASK, do_continue_asking
from evalhub.dashboards.win_rate_boards import CHOICES_TASK, REFRESH_TASK, refresh, refresh_choices


@shared_task(name=REFRESH_TASK, ignore_result=True)
def refresh_win_rate_boards_task(selection: dict[str, Any], correction: dict[str, Any]) -> None:
    refresh(Selection(**selection), Correction(**correction))


@shared_task(name=CONTINUE_TASK, ignore_result=True)
def continue_asking_task(run_id: int) -> None:
    do_continue_asking(run_id)


@shared_task(name=CHOICES_TASK, ignore_result=True)
def refresh_win_rate_choices_task() -> None:
    refresh_choices()


@shared_task(name=pairwise.REFRESH_TASK, ignore_result=True)
def refresh_pairwise_board_task(filters: dict[str, Any]) -> None:
    asked = pairwise.filters_from(filters)
    pairwise.refresh(asked)
    pairwise_html.draw_kept(asked)  # the first page after it shows the board at once
