"""A person's rating of one response on the rating screen."""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction

from evalhub.catalog.actions.judgments import PERSON_SCORE_SOURCE
from evalhub.catalog.models import (
    Criterion,
    Judgment,
    Response,
)
from evalhub.tallies.actions import note_change


class RatingRejected(ValueError):
    """A person's score that cannot be stored; the message says why."""


def do_rate_response(user: Any, response: Response, criterion: Criterion, score: int) -> Judgment:
    """Store (or change) a person's score of one response under a criterion, from the rating screen.
    The score must be one of the criterion's levels."""
    levels = {int(level) for level in criterion.levels}
    if score not in levels:
        raise RatingRejected(f"Choose a score from {min(levels)} to {max(levels)}.")
    if response.parent_id is not None:
        raise RatingRejected("Derived copies of a response are not rated by people.")
    try:
        with transaction.atomic():
            judgment, _ = Judgment.objects.update_or_create(
                criterion=criterion,
                judge_user=user,
                response=response,
                response_2=None,
                defaults={"score": float(score), "source": PERSON_SCORE_SOURCE},
            )
    except IntegrityError:  # the same person's other tab stored it first: change that one
        judgment = Judgment.objects.get(criterion=criterion, judge_user=user, response=response, response_2=None)
        judgment.score = float(score)
        judgment.save(update_fields=["score"])
    note_change()  # the pointwise pages read people's scores
    return judgment
