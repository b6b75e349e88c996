"""The human queue: reservations, verdicts, resolution, overrides, audit trail."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from evalhub.adjudication.actions import (
    AdjudicationRejected,
    do_override,
    do_reserve_next,
    do_skip,
    do_submit,
)
from evalhub.adjudication.models import Adjudication, FinalSource, ItemStatus, Reservation
from evalhub.debates.models import DebateStatus
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


@pytest.fixture
def people(db):
    return [make_user(f"adj{i}", "adjudicator") for i in range(4)]


def reserve(user, swapped: bool | None = None):
    reservation = do_reserve_next(user)
    if swapped is not None:
        reservation.swapped = swapped
        reservation.save(update_fields=["swapped"])
    return reservation


def test_the_oldest_item_is_reserved_first_and_kept_for_the_same_person(make_items, people):
    items = make_items(category="math")
    first = reserve(people[0])
    assert first.item == items[0]
    assert do_reserve_next(people[0]).pk == first.pk, "asking again returns the same reservation"
    assert do_reserve_next(people[1]).item == items[1], "the held item is not handed to someone else"


def test_a_run_can_be_prioritised(make_items, people):
    make_items(category="math", name="older")
    newer = make_items(category="code", name="newer")
    assert do_reserve_next(people[0], prefer_run=newer[0].debate.run_id).item == newer[0]


def test_an_item_needing_two_verdicts_goes_to_two_different_people_and_never_twice_to_one(make_items, people):
    first_item, second_item = make_items(required=2, category="math")[:2]
    assert reserve(people[0], swapped=False).item == first_item
    do_submit(people[0], first_item.pk, 1)
    # The first item still needs a verdict, but not from the person who gave one.
    assert do_reserve_next(people[0]).item == second_item
    assert reserve(people[1], swapped=False).item == first_item
    do_submit(people[1], first_item.pk, 1)
    first_item.refresh_from_db()
    assert (first_item.status, first_item.final_source, first_item.adjudications.count()) == (
        ItemStatus.RESOLVED,
        FinalSource.HUMAN_UNANIMOUS,
        2,
    )


def test_a_verdict_given_on_the_reversed_order_is_stored_in_the_agents_order(make_items, people):
    item = make_items(category="math")[0]
    reserve(people[0], swapped=True)
    adjudication, created = do_submit(people[0], item.pk, 1)  # "submission 1" as this person saw it
    debate = item.debate
    debate.refresh_from_db()
    assert created
    assert adjudication.verdict == 2
    assert adjudication.swapped
    assert debate.status == DebateStatus.ADJUDICATED
    assert debate.verdict == 2
    agents_second = debate.shown[1]
    assert debate.winner == ("a" if agents_second == debate.response_a else "b")


def test_a_double_submit_stores_one_verdict(make_items, people):
    item = make_items(category="math")[0]
    reserve(people[0], swapped=False)
    first, created_first = do_submit(people[0], item.pk, 1)
    second, created_second = do_submit(people[0], item.pk, 2)
    assert created_first
    assert not created_second
    assert first.pk == second.pk
    assert Adjudication.objects.filter(item=item).count() == 1
    assert first.verdict == 1


def test_a_submit_without_a_reservation_is_refused(make_items, people):
    item = make_items(category="math")[0]
    with pytest.raises(AdjudicationRejected, match="not reserved for you"):
        do_submit(people[0], item.pk, 1)


def test_an_expired_reservation_returns_the_item_to_the_queue(make_items, people):
    item = make_items(category="math")[0]
    reserve(people[0])
    Reservation.objects.filter(user=people[0]).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert do_reserve_next(people[1]).item == item
    with pytest.raises(AdjudicationRejected, match="expired"):
        do_submit(people[0], item.pk, 1)
    assert not Reservation.objects.filter(user=people[0]).exists()


def test_an_expired_reservation_nobody_else_took_is_still_accepted(make_items, people):
    item = make_items(category="math")[0]
    reserve(people[0])
    Reservation.objects.filter(user=people[0]).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert do_submit(people[0], item.pk, 0)[1]


def test_a_tie_asks_one_more_person_or_an_admin(make_items, people):
    another = make_items(required=2, tie_policy="another", category="math", name="a")[0]
    admin_case = make_items(required=2, tie_policy="admin", category="code", name="b")[0]
    for item in (another, admin_case):
        for person, verdict in zip(people[:2], (1, 2), strict=True):
            Reservation.objects.create(
                item=item, user=person, swapped=False, expires_at=timezone.now() + timedelta(minutes=5)
            )
            do_submit(person, item.pk, verdict)
    another.refresh_from_db()
    admin_case.refresh_from_db()
    assert (another.status, another.required_verdicts) == (ItemStatus.OPEN, 3)
    assert admin_case.status == ItemStatus.NEEDS_ADMIN
    assert reserve(people[2], swapped=False).item == another, "the third person gets the tied item"
    do_submit(people[2], another.pk, 2)
    another.refresh_from_db()
    assert (another.final_verdict, another.final_source) == (2, FinalSource.HUMAN_MAJORITY)


def test_an_admin_override_needs_a_reason_and_stays_in_the_trail(make_items, people):
    item = make_items(category="math")[0]
    reserve(people[0], swapped=False)
    do_submit(people[0], item.pk, 1)
    admin = make_user("boss", "admin")
    with pytest.raises(AdjudicationRejected, match="reason"):
        do_override(admin, item.pk, 0, "  ")
    do_override(admin, item.pk, 0, "Both answers are wrong.")
    item.refresh_from_db()
    assert (item.final_verdict, item.final_source) == (0, FinalSource.ADMIN_OVERRIDE)
    kinds = list(item.events.values_list("kind", flat=True))
    assert kinds == ["reserved", "submitted", "resolved", "resolved"]
    last = item.events.last()
    assert last.detail["reason"] == "Both answers are wrong."
    assert last.detail["previous"] == [1, "human_unanimous"]


def test_skipping_releases_the_item_for_others(make_items, people):
    item = make_items(category="math")[0]
    do_skip(reserve(people[0]))
    assert do_reserve_next(people[1]).item == item, "someone else's skip does not move it for them"


def test_a_skipped_item_comes_back_to_that_person_only_after_every_other(make_items, people):
    first, second, third = make_items(category="math")[:3]
    assert reserve(people[0]).item == first
    do_skip(Reservation.objects.get(user=people[0]))
    assert do_reserve_next(people[0]).item == second, "not the item just skipped"
    do_skip(Reservation.objects.get(user=people[0]))
    assert do_reserve_next(people[0]).item == third
    do_skip(Reservation.objects.get(user=people[0]))
    assert do_reserve_next(people[0]).item == first, "then the longest-ago skip"


def test_a_very_fast_verdict_is_flagged(make_items, people, settings):
    settings.EVALHUB_FAST_VERDICT_SECONDS = 60
    item = make_items(category="math")[0]
    reserve(people[0])
    assert do_submit(people[0], item.pk, 1)[0].flagged_fast


def test_one_more_verdict_stops_at_the_runs_number_plus_two_and_the_item_goes_to_an_admin(make_items, people):
    item = make_items(required=2, tie_policy="another", category="math")[0]
    for person, verdict in zip(people, (1, 2, 0, 0), strict=True):
        Reservation.objects.create(
            item=item, user=person, swapped=False, expires_at=timezone.now() + timedelta(minutes=5)
        )
        do_submit(person, item.pk, verdict)
        item.refresh_from_db()
    assert (item.status, item.required_verdicts) == (ItemStatus.NEEDS_ADMIN, 4), "2/1/1 of 4 is no majority"
    assert item.events.filter(kind="sent_to_admin", detail__reason="still tied at the most verdicts asked").exists()
    fifth = do_reserve_next(make_user("adj9", "adjudicator"))
    assert fifth is None or fifth.item != item, "nobody is asked for a fifth verdict"
    do_override(make_user("boss", "admin"), item.pk, 0, "two of four said neither")
    item.refresh_from_db()
    assert (item.status, item.final_verdict) == (ItemStatus.RESOLVED, 0)


def test_the_database_refuses_a_second_held_item_for_one_person(make_items, people):
    from django.db import IntegrityError, transaction

    first, second = make_items(category="math")[:2]
    later = timezone.now() + timedelta(minutes=5)
    Reservation.objects.create(item=first, user=people[0], swapped=False, expires_at=later)
    with pytest.raises(IntegrityError), transaction.atomic():
        Reservation.objects.create(item=second, user=people[0], swapped=False, expires_at=later)
