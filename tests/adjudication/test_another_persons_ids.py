"""One adjudicator cannot read or change another's reservation, verdict or score by naming its id: every
screen and form is scoped to the signed-in person, and a forged id changes nothing of anyone else's."""

from __future__ import annotations

import pytest

from evalhub.adjudication.actions import do_reserve_next
from evalhub.adjudication.models import Adjudication, Reservation
from evalhub.catalog.models import Judgment
from tests.adjudication.test_rating import SCREEN, response_of, responses, shown  # noqa: F401  (fixture)
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


def test_another_adjudicator_cannot_open_submit_skip_or_keep_alive_a_reservation_by_its_item_id(
    client, login, make_items
):
    ana, ben = make_user("ana", "adjudicator"), make_user("ben", "adjudicator")
    make_items()
    held = do_reserve_next(ana)
    before = Reservation.objects.filter(pk=held.pk).values_list("user_id", "item_id", "expires_at").get()
    login(ben)
    item = f"/adjudicate/items/{held.item_id}"

    assert client.get(f"{item}/").status_code == 404, "ana's screen, by its id"
    client.post(f"{item}/submit/", {"verdict": 1, "confidence": 3})
    client.post(f"{item}/skip/")
    assert client.post(f"{item}/extend/").status_code == 410, "no reservation of ben's to keep alive"

    assert not Adjudication.objects.exists(), "no verdict stored on ana's item"
    assert Reservation.objects.filter(pk=held.pk).values_list("user_id", "item_id", "expires_at").get() == before
    assert client.get(f"{item}/review/").status_code == 403, "the review of an item is for admins"


def test_a_forged_response_on_the_rating_screen_changes_nothing_of_anyone_elses(
    client,
    login,
    responses,  # noqa: F811
):
    ana, ben = make_user("ana", "adjudicator"), make_user("ben", "adjudicator")
    login(ana)
    handle = shown(client.get(SCREEN).content.decode())
    assert client.post(f"{SCREEN}submit/", {"response": handle, "score": 5}).status_code == 200
    target = response_of(client, handle)
    login(ben)
    for forged in (handle, target, 10**9):  # ana's handle, the response's id, an id of nothing
        assert client.post(f"{SCREEN}submit/", {"response": forged, "score": 1}).status_code == 410
    scores = dict(Judgment.objects.filter(response_id=target).values_list("judge_user__username", "score"))
    assert scores == {"ana": 5.0}, "ana's score stays hers, and ben scored nothing he was not shown"
