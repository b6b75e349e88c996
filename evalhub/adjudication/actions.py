"""Writes to the human queue. Every step is a row in the audit trail.

Reservations are made while holding the item's row lock (SELECT … FOR UPDATE SKIP LOCKED on
PostgreSQL; SQLite serialises writers with IMMEDIATE transactions), and counted against the
verdicts still needed, so an item is never held by more people than it needs, nor twice by
one person. A second submit of the same verdict finds the first and stores nothing.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from datetime import timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Case, Count, F, IntegerField, Max, OuterRef, Q, Subquery, Value, When
from django.db.models.functions import Coalesce
from django.utils import timezone

from evalhub.adjudication.models import (
    Adjudication,
    AdjudicationEvent,
    AdjudicationItem,
    BlindVerdict,
    FinalSource,
    ItemStatus,
    Reservation,
)
from evalhub.core.scaleeval.aids import aid_for
from evalhub.core.statistics.agreement import unswap
from evalhub.debates.actions import broadcast_run, do_settle_debate
from evalhub.debates.evaluation_events import PairVerdict, pair_events
from evalhub.debates.models import BLIND_FIRST, DebateRun
from evalhub.system.telemetry import emit_after_commit

CANDIDATES_PER_TRY = 25
# "Ask one more person" stops here: past the run's number of verdicts plus this many, a split that
# still has no majority (7/6/5 once asked for a 19th verdict from 18 people) goes to an admin.
MAX_EXTRA_VERDICTS = 2


class AdjudicationRejected(ValueError):
    pass


def do_open_items(debates) -> None:
    """Debates the agents left unresolved wait for people: one item each, asking for the run's number
    of verdicts. A debate settled again (a retried chunk) keeps its item as it is."""
    AdjudicationItem.objects.bulk_create(
        [AdjudicationItem(debate=debate, required_verdicts=debate.run.human_verdicts) for debate in debates],
        ignore_conflicts=True,
    )


def _ttl() -> timedelta:
    return timedelta(minutes=settings.EVALHUB_RESERVATION_MINUTES)


def _event(item: AdjudicationItem, user: Any, kind: str, **detail: Any) -> None:
    AdjudicationEvent.objects.create(item=item, user=user, kind=kind, detail=detail)


def queue_for(user: Any):
    """Open items this person has not judged, oldest first."""
    return AdjudicationItem.objects.filter(status=ItemStatus.OPEN).exclude(adjudications__user=user)


def _available(user: Any, now):
    """Open items this person has not judged that still need someone: verdicts plus other people's
    live reservations below what the item requires. Subqueries, not joins: FOR UPDATE allows them."""
    verdicts = (
        Adjudication.objects.filter(item=OuterRef("pk")).order_by().values("item").annotate(n=Count("id")).values("n")
    )
    held = (
        Reservation.objects.filter(item=OuterRef("pk"), expires_at__gt=now)
        .exclude(user=user)
        .order_by()
        .values("item")
        .annotate(n=Count("id"))
        .values("n")
    )
    return (
        queue_for(user)
        .annotate(taken=Coalesce(Subquery(verdicts), 0) + Coalesce(Subquery(held), 0))
        .filter(taken__lt=F("required_verdicts"))
    )


def do_reserve_next(user: Any, prefer_run: int | None = None, attempts: int = 5) -> Reservation | None:
    """The person's current reservation, or a new one on the oldest item that still needs someone."""
    for attempt in range(attempts):
        now = timezone.now()
        try:
            reservation = _reserve_once(user, now, prefer_run)
        except IntegrityError:
            # The same person's other request won the one slot (one_reservation_per_person); the next
            # try returns that reservation as the current one.
            continue
        if reservation is not None:
            return reservation
        # Nothing free: either the queue is empty for this person, or every free item was locked by
        # someone reserving at this very moment; only the second is worth another try.
        if not _available(user, timezone.now()).exists():
            return None
        time.sleep(0.02 * (attempt + 1))
    return None


def _reserve_once(user: Any, now, prefer_run: int | None) -> Reservation | None:
    with transaction.atomic():
        # A person holds one reservation at most (one_reservation_per_person): a live one on an open item
        # is their current item; a stale one (expired, or on an item settled meanwhile) makes way.
        held = Reservation.objects.select_for_update(of=("self",)).select_related("item").filter(user=user).first()
        if held is not None and held.expires_at > now and held.item.status == ItemStatus.OPEN:
            held.expires_at = now + _ttl()
            held.save(update_fields=["expires_at"])
            return held
        if held is not None:
            held.delete()
        # Items this person skipped come after every other, the longest-ago skip first: "Start" after
        # a skip once gave back the item just skipped.
        last_skip = AdjudicationEvent.objects.filter(item=OuterRef("pk"), user=user, kind="skipped").order_by(
            "-created_at"
        )
        candidates = _available(user, now).annotate(last_skip=Subquery(last_skip.values("created_at")[:1]))
        order = [F("last_skip").asc(nulls_first=True), "created_at", "id"]
        if prefer_run:
            preferred = Case(
                When(debate__run_id=prefer_run, then=Value(0)), default=Value(1), output_field=IntegerField()
            )
            candidates = candidates.annotate(preferred=preferred)
            order = ["preferred", *order]
        for pk in candidates.order_by(*order).values_list("pk", flat=True)[:CANDIDATES_PER_TRY]:
            # One row locked at a time, skipping a row another request holds this instant: locking
            # every candidate at once hid them all from people starting at the same moment, who were
            # told the queue was empty while items waited (and made submits on them wait).
            locked = AdjudicationItem.objects.select_for_update(skip_locked=True, of=("self",))
            item = locked.select_related("debate__run").filter(pk=pk, status=ItemStatus.OPEN).first()
            if item is None:
                continue
            # Counted again under the row lock, in a statement of its own: the candidate query's snapshot
            # may be stale, and so would a count inside the locking statement be.
            if not _available(user, now).filter(pk=pk).exists():
                continue
            # A live reservation that this person's other request made this instant makes this insert fail.
            reservation = Reservation.objects.create(
                item=item, user=user, swapped=random.random() < 0.5, aid=_aid(item, user), expires_at=now + _ttl()
            )
            _event(item, user, "reserved", swapped=reservation.swapped, aid=reservation.aid)
            return reservation
    return None


def is_blind_first(run: DebateRun) -> bool:
    """People give a blind verdict before any aid: a blind-first run with agents (a labelling run has no aid)."""
    return run.adjudication_flow == BLIND_FIRST and not run.is_labelling


def held_blind(user: Any) -> list[int]:
    """The debates of items this person holds in a blind-first run with no blind verdict of theirs
    stored yet (evalhub.debates.visibility withholds them from every door)."""
    held = Reservation.objects.filter(
        user=user, item__debate__run__adjudication_flow=BLIND_FIRST, expires_at__gt=timezone.now()
    ).exclude(item__blind_verdicts__user=user)
    return list(held.values_list("item__debate_id", flat=True))


def _aid(item: AdjudicationItem, user: Any) -> str:
    """The aid this person sees on this item after their blind verdict ("" in a one-stage run): the one
    drawn when they gave it, if they did; else the next in their balanced sequence for the run."""
    run = item.debate.run
    if not is_blind_first(run):
        return ""
    # One read for both: a person gives one blind verdict an item at most.
    theirs = BlindVerdict.objects.filter(user=user, item__debate__run=run)
    seen = theirs.aggregate(given=Max("aid", filter=Q(item=item)), position=Count("id"))
    if seen["given"] is not None:
        return seen["given"]
    return aid_for(run.seed, user.pk, seen["position"], run.aids)


def do_extend(user: Any, item_id: int) -> bool:
    """Keep a live reservation while its person works; an expired one is not revived."""
    now = timezone.now()
    return bool(
        Reservation.objects.filter(item_id=item_id, user=user, expires_at__gt=now).update(expires_at=now + _ttl())
    )


def do_skip(reservation: Reservation) -> None:
    with transaction.atomic():
        _event(reservation.item, reservation.user, "skipped")
        reservation.delete()


def _holding_problem(item: AdjudicationItem, user: Any, reservation: Reservation | None, now) -> str:
    """Why this person may not give a verdict on the item now, or ""."""
    if reservation is None:
        return "this item is not reserved for you; start again from the queue."
    if item.status != ItemStatus.OPEN:
        return "this item was settled meanwhile; your reservation was released."
    if reservation.expires_at <= now:  # counted only then: a live reservation keeps its place
        others = item.reservations.filter(expires_at__gt=now).exclude(user=user).count()
        if item.adjudications.count() + others >= item.required_verdicts:
            return "your reservation expired and the item went to someone else."
    return ""


def _refuse(item: AdjudicationItem, user: Any, reservation: Reservation | None, problem: str) -> None:
    if reservation is not None:
        reservation.delete()  # committed: the stale hold goes even though the verdict is refused
        _event(item, user, "refused", reason=problem)


def _check_verdict(verdict_seen: int, confidence: int | None = None) -> None:
    if verdict_seen not in (0, 1, 2):
        raise AdjudicationRejected("a verdict is 1, 2 or 0.")
    if confidence is not None and confidence not in (1, 2, 3):
        raise AdjudicationRejected("confidence is 1, 2 or 3.")


def do_submit_blind(user: Any, item_id: int, verdict_seen: int) -> tuple[BlindVerdict, bool]:
    """Store a person's verdict before any aid is shown (blind-first runs); returns (verdict, created).
    Once stored it is never changed: the screen then shows the aid, and the verdict after it is
    `do_submit`'s. A second submit (a double click, another tab) finds the first and stores nothing."""
    _check_verdict(verdict_seen)
    now = timezone.now()
    problem = ""
    with transaction.atomic():
        item = AdjudicationItem.objects.select_for_update().select_related("debate__run").get(pk=item_id)
        if not is_blind_first(item.debate.run):
            raise AdjudicationRejected("this run shows the debate from the start: give your verdict once.")
        existing = BlindVerdict.objects.filter(item=item, user=user).first()
        if existing is not None:
            return existing, False
        reservation = Reservation.objects.filter(item=item, user=user).first()
        problem = _holding_problem(item, user, reservation, now)
        if problem or reservation is None:
            _refuse(item, user, reservation, problem)
        else:
            blind = BlindVerdict.objects.create(
                item=item,
                user=user,
                verdict=unswap(verdict_seen) if reservation.swapped else verdict_seen,
                swapped=reservation.swapped,
                aid=reservation.aid,
                seconds_spent=(now - reservation.started_at).total_seconds(),
            )
            _event(item, user, "blind_verdict", verdict=blind.verdict, aid=blind.aid)
    if problem:
        raise AdjudicationRejected(problem)
    return blind, True


def do_submit(
    user: Any, item_id: int, verdict_seen: int, *, confidence: int | None = None, notes: str = ""
) -> tuple[Adjudication, bool]:
    """Store the person's verdict (given in the order they saw); returns (verdict, created). In a
    blind-first run this is the verdict after the aid, and the blind one must be stored first."""
    _check_verdict(verdict_seen, confidence)
    now = timezone.now()
    problem = ""
    with transaction.atomic():
        item = AdjudicationItem.objects.select_for_update().select_related("debate__run").get(pk=item_id)
        existing = Adjudication.objects.filter(item=item, user=user).first()
        if existing is not None:  # a double click, or a second tab: the first verdict stands
            return existing, False
        blind = None
        if is_blind_first(item.debate.run):
            blind = BlindVerdict.objects.filter(item=item, user=user).first()
            if blind is None:  # the reveal step was never shown: a forged or stale form
                raise AdjudicationRejected("give your verdict before the aid is shown; reload the page to go on.")
        reservation = Reservation.objects.filter(item=item, user=user).first()
        problem = _holding_problem(item, user, reservation, now)
        if problem or reservation is None:
            _refuse(item, user, reservation, problem)
        else:
            seconds = (now - reservation.started_at).total_seconds()
            reading = seconds if blind is None else blind.seconds_spent  # the time to the first verdict
            adjudication = Adjudication.objects.create(
                item=item,
                user=user,
                verdict=unswap(verdict_seen) if reservation.swapped else verdict_seen,
                swapped=reservation.swapped,
                confidence=confidence,
                notes=notes[:5000],
                seconds_spent=seconds,
                flagged_fast=reading < settings.EVALHUB_FAST_VERDICT_SECONDS,  # too fast to have read the pair
                blind=blind,
            )
            reservation.delete()
            detail = {} if blind is None else {"changed_after_reveal": adjudication.changed_after_reveal}
            _event(item, user, "submitted", verdict=adjudication.verdict, seconds=round(seconds, 1), **detail)
            emit_after_commit(partial(pair_events, [_person_verdict(adjudication, item.debate_id)]))
            _resolve_if_complete(item)
    if problem:
        raise AdjudicationRejected(problem)
    return adjudication, True


def _resolve_if_complete(item: AdjudicationItem) -> None:
    verdicts = list(item.adjudications.values_list("verdict", flat=True))
    if len(verdicts) < item.required_verdicts:
        return
    (top, top_count), *rest = Counter(verdicts).most_common()
    if not rest:
        _finalise(item, top, FinalSource.HUMAN_UNANIMOUS, None)
    elif top_count * 2 > len(verdicts):
        _finalise(item, top, FinalSource.HUMAN_MAJORITY, None)
    elif item.debate.run.tie_policy == "admin" or item.required_verdicts >= most_verdicts(item):
        item.status = ItemStatus.NEEDS_ADMIN
        item.save(update_fields=["status"])
        reason = "tie policy" if item.debate.run.tie_policy == "admin" else "still tied at the most verdicts asked"
        _event(item, None, "sent_to_admin", verdicts=verdicts, reason=reason)
        broadcast_run(item.debate.run)
    else:
        item.required_verdicts += 1
        item.save(update_fields=["required_verdicts"])
        _event(item, None, "one_more_verdict", verdicts=verdicts)


def _person_verdict(adjudication: Adjudication, debate_id: int) -> PairVerdict:
    """A person's verdict as an evaluation event: named by their user id, never their name."""
    return PairVerdict(
        debate_id=debate_id,
        verdict=adjudication.verdict,
        evaluator=f"person:{adjudication.user_id}",
        explanation=adjudication.notes,
        evaluator_version="adjudication",
        extra={"adjudication.id": adjudication.pk, "confidence": adjudication.confidence or 0},
    )


def most_verdicts(item: AdjudicationItem) -> int:
    """How many verdicts a tied item may ask for before it goes to an admin."""
    return item.debate.run.human_verdicts + MAX_EXTRA_VERDICTS


def _finalise(item: AdjudicationItem, verdict: int, source: str, user: Any, **detail: Any) -> None:
    previous = (item.final_verdict, item.final_source)
    item.status, item.final_verdict, item.final_source, item.resolved_at = (
        ItemStatus.RESOLVED,
        verdict,
        source,
        timezone.now(),
    )
    item.save(update_fields=["status", "final_verdict", "final_source", "resolved_at"])
    item.reservations.all().delete()
    _event(item, user, "resolved", verdict=verdict, source=source, previous=list(previous), **detail)
    do_settle_debate(item.debate, verdict)  # the debates app's write: the boards follow people's verdict


def do_override(admin: Any, item_id: int, verdict: int, reason: str) -> AdjudicationItem:
    """An admin's final say, with a reason; the earlier outcome stays in the audit trail."""
    if verdict not in (0, 1, 2):
        raise AdjudicationRejected("a verdict is 1, 2 or 0.")
    if not reason.strip():
        raise AdjudicationRejected("an override needs a reason.")
    with transaction.atomic():
        item = AdjudicationItem.objects.select_for_update().select_related("debate__run").get(pk=item_id)
        _finalise(item, verdict, FinalSource.ADMIN_OVERRIDE, admin, reason=reason.strip()[:2000])
    return item


def queue_counts(user: Any) -> dict[str, int]:
    return {
        "waiting": queue_for(user).count(),
        "done": Adjudication.objects.filter(user=user).count(),
        "open": AdjudicationItem.objects.filter(status=ItemStatus.OPEN).count(),
        "needs_admin": AdjudicationItem.objects.filter(status=ItemStatus.NEEDS_ADMIN).count(),
        "flagged": Adjudication.objects.filter(flagged_fast=True).count(),
    }


def runs_with_open_items():
    from evalhub.debates.models import DebateRun

    # A run's name often names its two models (run_debates' default does): blind adjudicators are
    # shown the benchmark and criterion instead, so both are loaded here.
    return (
        DebateRun.objects.select_related("benchmark", "criterion")
        .annotate(
            open_items=Count("debates__adjudication_item", filter=Q(debates__adjudication_item__status=ItemStatus.OPEN))
        )
        .filter(open_items__gt=0)
    )
