"""Twenty people adjudicating fifty items at once, on PostgreSQL: nothing doubled, nothing lost."""

from __future__ import annotations

import random
import threading
from collections import Counter

import pytest
from django.conf import settings
from django.db.models import F

from evalhub.adjudication.actions import (
    CANDIDATES_PER_TRY,
    AdjudicationRejected,
    do_reserve_next,
    do_submit,
    do_submit_blind,
)
from evalhub.adjudication.models import Adjudication, AdjudicationItem, BlindVerdict, ItemStatus, Reservation
from evalhub.debates.models import BLIND_FIRST
from tests.conftest import make_user
from tests.worker_threads import WorkerThreads

POSTGRES = settings.DATABASES["default"]["ENGINE"].endswith("postgresql")
pytestmark = [
    pytest.mark.skipif(not POSTGRES, reason="row locks are what is tested: run with DATABASE_URL=postgres://…"),
    pytest.mark.django_db(transaction=True),
]


def everyone_at_once(people: list, decide) -> list[str]:  # noqa: ANN001 (decide: (person, reservation, rng))
    """Each person, in a thread of their own and all released together, takes the next item and
    `decide`s it until the queue is empty; the refusals they got, which a granted reservation must never."""
    refused: list[str] = []
    start = threading.Barrier(len(people))

    def work(person) -> None:
        rng = random.Random(person.pk)
        start.wait()
        while (reservation := do_reserve_next(person)) is not None:
            try:
                decide(person, reservation, rng)
            except AdjudicationRejected as error:
                refused.append(str(error))

    workers = WorkerThreads()
    for person in people:
        workers.start(work, person)
    workers.join(120)
    return refused


def test_twenty_adjudicators_on_fifty_items_never_collide(make_items):
    items = [item for name in "abcde" for item in make_items(required=2, tie_policy="admin", name=name)][:50]
    AdjudicationItem.objects.exclude(pk__in=[i.pk for i in items]).delete()
    people = [make_user(f"person{i}", "adjudicator") for i in range(20)]
    submitted: list[tuple[int, int]] = []

    def decide(person, reservation, rng: random.Random) -> None:
        # A double click now and then: the second submit must store nothing.
        for _ in range(2 if rng.random() < 0.2 else 1):
            adjudication, created = do_submit(person, reservation.item_id, rng.choice([0, 1, 2]))
            if created:
                submitted.append((reservation.item_id, person.pk))  # list.append is atomic

    refused = everyone_at_once(people, decide)
    assert not refused, f"a granted reservation must always be accepted: {refused[:3]}"
    per_item = Counter(item_id for item_id, _ in submitted)
    assert len(per_item) == 50, "every item got exactly the two verdicts it needs"
    assert set(per_item.values()) == {2}, "every item got exactly the two verdicts it needs"
    assert len(set(submitted)) == len(submitted) == 100, "nobody judged an item twice"
    stored = Counter(Adjudication.objects.values_list("item_id", flat=True))
    assert stored == per_item, "every verdict a person was told was stored is stored, and nothing else"
    assert not Reservation.objects.exists()
    statuses = Counter(AdjudicationItem.objects.values_list("status", flat=True))
    assert set(statuses) <= {ItemStatus.RESOLVED, ItemStatus.NEEDS_ADMIN}
    assert sum(statuses.values()) == 50


def reserve_at_once(people: list) -> list[int | None]:
    """Each person asks for the next item in a thread of their own, all released together; the item
    each one got (None: "all done"), in the order given."""
    start = threading.Barrier(len(people))
    got: list[int | None] = [None] * len(people)

    def reserve(index: int, person) -> None:
        start.wait()
        reservation = do_reserve_next(person)
        got[index] = reservation.item_id if reservation else None

    workers = WorkerThreads()
    for index, person in enumerate(people):
        workers.start(reserve, index, person)
    workers.join()
    return got


def test_a_double_submit_that_reserves_the_next_item_twice_at_once_holds_one_item(make_items):
    """Two tabs (or a double click) asking for the next item at the same moment, ten times over."""
    for name in "abc":  # more items than one look at the queue considers (CANDIDATES_PER_TRY)
        make_items(name=name)
    assert AdjudicationItem.objects.count() > CANDIDATES_PER_TRY
    person = make_user("twice", "adjudicator")
    for attempt in range(10):
        Reservation.objects.filter(user=person).delete()
        got = reserve_at_once([person, person])
        held = list(Reservation.objects.filter(user=person).values_list("item_id", flat=True))
        assert len(held) == 1, f"try {attempt}: one item held, both answers name it ({got}, {held})"
        assert got == held * 2, f"try {attempt}: one item held, both answers name it ({got}, {held})"


def test_as_many_people_as_free_items_starting_at_once_each_get_one_and_nobody_hears_all_done(make_items):
    """Ten people, ten free items, one click each at the same moment: every one gets an item. A
    reservation once locked every candidate it looked at, so the others found nothing free and were
    told the queue was empty while items waited."""
    items = make_items(name="ten")[:10]
    AdjudicationItem.objects.exclude(pk__in=[item.pk for item in items]).delete()
    got = reserve_at_once([make_user(f"p{i}", "adjudicator") for i in range(10)])
    assert None not in got, f"told 'all done' with free items left: {got}"
    assert sorted(got) == sorted(item.pk for item in items), "each item once"


def test_twenty_people_in_a_blind_first_run_give_each_verdict_once_whatever_they_click(make_items):
    """Both steps double-clicked now and then, at the same moment as nineteen others: one blind verdict
    and one verdict after the reveal per person and item, each pointing to its blind one."""
    items = [
        item for name in "abcde" for item in make_items(required=2, tie_policy="admin", name=name, flow=BLIND_FIRST)
    ][:30]
    AdjudicationItem.objects.exclude(pk__in=[i.pk for i in items]).delete()
    people = [make_user(f"person{i}", "adjudicator") for i in range(20)]

    def decide(person, reservation, rng: random.Random) -> None:
        for _ in range(2 if rng.random() < 0.3 else 1):
            do_submit_blind(person, reservation.item_id, rng.choice([0, 1, 2]))
        for _ in range(2 if rng.random() < 0.3 else 1):
            do_submit(person, reservation.item_id, rng.choice([0, 1, 2]))

    refused = everyone_at_once(people, decide)
    assert not refused, f"a granted reservation must always be accepted: {refused[:3]}"
    assert set(Counter(Adjudication.objects.values_list("item_id", flat=True)).values()) == {2}
    assert BlindVerdict.objects.count() == Adjudication.objects.count() == 60
    assert not Adjudication.objects.filter(blind__isnull=True).exists()
    assert not Adjudication.objects.exclude(blind__user=F("user")).exists(), "each points to its own blind verdict"
