"""People's labels asked for until a corrected interval is narrow enough, and no longer.

An admin asks for ± target points on a model's corrected win rate, a budget of pairs and a batch
size. A batch of the judge's unlabelled pairs, drawn at random, goes to people's queue as a labelling
run. When people have settled every pair of the batch, a worker looks at the model's anytime-valid
corrected interval (a confidence sequence: looking after every batch keeps its 95 % promise, which an
ordinary interval's would not) and stops when it is within the target, or when the budget is spent,
or when no unlabelled pair is left, saying which; otherwise it sends the next batch.
"""

from __future__ import annotations

import logging
from typing import Any

from django.db import transaction
from django.utils import timezone

from evalhub.celery import task_named
from evalhub.core.statistics.estimators import Correction
from evalhub.dashboards.baseline_win_rates import Selection, corrected_rows, do_ask_people
from evalhub.dashboards.models import LabelRequest
from evalhub.debates.models import Debate, DebateStatus

logger = logging.getLogger(__name__)
CONTINUE_TASK = "dashboards.continue_asking"
MAX_BUDGET = 5000


def selection_of(request: LabelRequest) -> Selection:
    return Selection(request.benchmark, request.judge, request.baseline, request.criterion)


def check_asking(target: float, budget: int, batch: int) -> None:
    if not 0 < target <= 50:
        raise ValueError("the target must be between 0 and 50 points.")
    if not 1 <= batch <= budget <= MAX_BUDGET:
        raise ValueError(f"a batch of at least 1 pair, and a budget of at least a batch and at most {MAX_BUDGET}.")


def do_ask_until(
    user: Any, selection: Selection, model: str, *, target: float, budget: int, batch: int, seed: int
) -> LabelRequest:
    """Start asking: the request and its first batch, in one transaction (a refused batch stores nothing)."""
    check_asking(target, budget, batch)
    with transaction.atomic():
        request = LabelRequest.objects.create(
            benchmark=selection.benchmark,
            judge=selection.judge,
            baseline=selection.baseline,
            criterion=selection.criterion,
            model=model,
            target=target,
            budget=budget,
            batch=batch,
            seed=seed,
            created_by=user if getattr(user, "is_authenticated", False) else None,
        )
        _send_batch(request, user)
    return request


def _send_batch(request: LabelRequest, user: Any) -> None:
    count = min(request.batch, request.budget - request.sent)
    run, sent = do_ask_people(user, selection_of(request), request.model, count, seed=request.seed + request.sent)
    request.last_run, request.sent = run, request.sent + sent
    request.save(update_fields=["last_run", "sent"])


def on_settled(debate: Debate) -> None:
    """A debate of a labelling run was settled by people: once committed, a worker looks again. Every
    settled pair asks (the worker waits for the whole batch): two last verdicts committed at once would
    each see the other's pair still waiting, and if each asked only for a complete batch, neither would."""
    if debate.run.agents:
        return
    run_id = debate.run_id
    if LabelRequest.objects.filter(last_run_id=run_id, outcome=LabelRequest.Outcome.ASKING).exists():
        transaction.on_commit(lambda: task_named(CONTINUE_TASK).delay(run_id))


def do_continue_asking(run_id: int) -> LabelRequest | None:
    """The look after a batch: stop, saying why, or send the next batch. Does nothing while the batch
    still has pairs people have not settled, or when another look already moved the request on."""
    with transaction.atomic():
        request = LabelRequest.objects.select_for_update().filter(last_run_id=run_id).first()
        if request is None or request.outcome != LabelRequest.Outcome.ASKING:
            return request
        if Debate.objects.filter(run_id=run_id).exclude(status=DebateStatus.ADJUDICATED).exists():
            return request
        row = corrected_rows(selection_of(request), correction=Correction(anytime=True)).get(request.model)
        request.looks += 1
        half = None
        if row is not None and row.corrected_ci_low is not None and row.corrected_ci_high is not None:
            half = (row.corrected_ci_high - row.corrected_ci_low) / 2
        request.half_width = half
        labels = row.n_human if row is not None else 0
        if half is not None and half <= request.target:
            _finish(request, LabelRequest.Outcome.REACHED, f"± {half:.2f} points after {labels} labels")
        elif request.sent >= request.budget:
            shown = "no interval yet" if half is None else f"still ± {half:.2f} points"
            _finish(request, LabelRequest.Outcome.SPENT, f"{request.sent} pairs sent, {shown} after {labels} labels")
        else:
            try:
                _send_batch(request, request.created_by)
            except ValueError as error:  # every judged pair is labelled, or none has both responses
                _finish(request, LabelRequest.Outcome.EXHAUSTED, str(error)[:300])
            else:
                request.save(update_fields=["looks", "half_width"])
    return request


def _finish(request: LabelRequest, outcome: str, reason: str) -> None:
    request.outcome, request.reason, request.finished_at = outcome, reason[:300], timezone.now()
    request.save(update_fields=["outcome", "reason", "finished_at", "looks", "half_width"])
    logger.info("label request %s: %s (%s)", request.pk, outcome, reason)


def requests_for(selection: Selection) -> list[LabelRequest]:
    return list(
        LabelRequest.objects.filter(
            benchmark=selection.benchmark,
            judge=selection.judge,
            baseline=selection.baseline,
            criterion=selection.criterion,
        )[:20]
    )
