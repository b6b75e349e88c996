"""A person's verdict as the screen gives it, in either flow: in a blind-first run the blind verdict
first, then the same verdict kept after the reveal."""

from __future__ import annotations

from typing import Any

from evalhub.adjudication.actions import do_submit, do_submit_blind, is_blind_first
from evalhub.adjudication.models import AdjudicationItem


def give_verdict(user: Any, item_id: int, verdict: int, **fields: Any):
    if is_blind_first(AdjudicationItem.objects.select_related("debate__run").get(pk=item_id).debate.run):
        do_submit_blind(user, item_id, verdict)
    return do_submit(user, item_id, verdict, **fields)
