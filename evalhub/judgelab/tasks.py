from __future__ import annotations

from celery import shared_task

from evalhub.core.statistics.estimators import AUTO
from evalhub.judgelab.observations import BLIND, Scope
from evalhub.judgelab.report import REFRESH_TASK, refresh_report


@shared_task(name=REFRESH_TASK, ignore_result=True)
def refresh_report_task(benchmark: str, criterion: str, people: str = BLIND, estimator: str = AUTO) -> None:
    refresh_report(Scope(benchmark=benchmark, criterion=criterion, people=people, estimator=estimator))
