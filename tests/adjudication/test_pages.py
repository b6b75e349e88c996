"""The adjudication pages: who may use them, what they show, and what they hide."""

from __future__ import annotations

import json

import pytest

from evalhub.adjudication.actions import do_reserve_next, do_submit
from evalhub.adjudication.models import Adjudication, Reservation
from evalhub.adjudication.reports import agreement_report
from evalhub.debates.models import BLIND_FIRST
from tests.conftest import make_user

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("role", ["viewer", "expert"])
def test_viewers_and_experts_cannot_adjudicate(login, make_items, role):
    make_items(category="math")
    client = login(make_user("someone", role))
    assert client.get("/adjudicate/").status_code == 403
    assert client.post("/adjudicate/start/").status_code == 403


def test_an_outsider_is_refused_and_anonymous_is_sent_to_login(client, login, make_items):
    make_items(category="math")
    assert client.get("/adjudicate/").status_code == 302
    assert login(make_user("nobody")).get("/adjudicate/").status_code == 403


def test_start_reserves_and_shows_the_item_blind(login, adjudicator, make_items):
    item = make_items(category="math")[0]
    client = login(adjudicator)
    response = client.post("/adjudicate/start/")
    assert response.status_code == 302
    assert response.url == f"/adjudicate/items/{item.pk}/"
    body = client.get(response.url).content.decode()
    assert item.debate.prompt.text in body
    assert "Demo system" not in body, "model names stay hidden"
    assert "demo-thorough" not in body, "model names stay hidden"


def test_an_adjudicator_cannot_open_an_item_held_by_someone_else(login, adjudicator, make_items):
    item = make_items(category="math")[0]
    other = make_user("other", "adjudicator")
    do_reserve_next(other)
    assert login(adjudicator).get(f"/adjudicate/items/{item.pk}/").status_code == 404


def test_nobody_sees_another_persons_verdict_before_giving_their_own(login, adjudicator, make_items):
    item = make_items(required=2, category="math")[0]
    first = make_user("zoltan-earlier-judge", "adjudicator")
    do_reserve_next(first)
    do_submit(first, item.pk, 1, notes="FIRST PERSON'S PRIVATE NOTE")
    client = login(adjudicator)
    response = client.post("/adjudicate/start/")
    body = client.get(response.url).content.decode()
    assert response.url == f"/adjudicate/items/{item.pk}/"
    assert "FIRST PERSON'S PRIVATE NOTE" not in body
    assert "zoltan" not in body


def test_two_quick_posts_of_the_same_verdict_store_one(login, adjudicator, make_items):
    item = make_items(category="math")[0]
    client = login(adjudicator)
    client.post("/adjudicate/start/")
    for _ in range(2):
        response = client.post(f"/adjudicate/items/{item.pk}/submit/", {"verdict": "1"}, headers={"HX-Request": "true"})
        assert response.status_code == 200
    assert Adjudication.objects.filter(item=item).count() == 1


def test_submitting_in_place_returns_the_next_item(login, adjudicator, make_items):
    first, second = make_items(category="math")[:2]
    client = login(adjudicator)
    client.post("/adjudicate/start/")
    response = client.post(
        f"/adjudicate/items/{first.pk}/submit/", {"verdict": "0", "confidence": "3"}, headers={"HX-Request": "true"}
    )
    body = response.content.decode()
    assert 'id="adjudication-area"' in body
    assert f'data-item="{second.pk}"' in body
    assert "<html" not in body


@pytest.mark.parametrize("form", [{"verdict": "7"}, {"verdict": "x"}, {"verdict": "1", "confidence": "9"}, {}])
def test_a_forged_verdict_is_refused_and_nothing_is_stored(login, adjudicator, make_items, form):
    item = make_items(category="math")[0]
    client = login(adjudicator)
    client.post("/adjudicate/start/")
    response = client.post(f"/adjudicate/items/{item.pk}/submit/", form, headers={"HX-Request": "true"})
    assert response.status_code == 400
    assert not Adjudication.objects.exists()
    assert Reservation.objects.filter(item=item).exists(), "the item stays reserved for another try"


def test_submissions_are_shown_escaped(login, adjudicator, make_items):
    item = make_items(category="math")[0]
    item.debate.response_a.text = "<script>alert('x')</script>"
    item.debate.response_a.save()
    client = login(adjudicator)
    body = client.get(client.post("/adjudicate/start/").url).content.decode()
    assert "<script>alert" not in body
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in body


def test_only_admins_review_and_override(login, adjudicator, admin_user, make_items):
    item = make_items(category="math")[0]
    assert login(adjudicator).get(f"/adjudicate/items/{item.pk}/review/").status_code == 403
    response = login(admin_user).post(f"/adjudicate/items/{item.pk}/review/", {"verdict": "2", "reason": "checked"})
    item.refresh_from_db()
    assert response.status_code == 302
    assert (item.final_verdict, item.final_source) == (2, "admin_override")
    trail = login(admin_user).get(f"/adjudicate/items/{item.pk}/review/").content.decode()
    assert "reason: checked" in trail, "the audit trail reads as text, not Python"
    assert "{&#x27;" not in trail, "the audit trail reads as text, not Python"


def test_the_agreement_report_matches_hand_computed_kappas(make_items):
    items = make_items(required=2, tie_policy="admin", category="")[:4]
    ann, bob = make_user("ann", "adjudicator"), make_user("bob", "adjudicator")
    # ann: 1 1 2 0 ; bob: 1 2 2 0 (agents' order). Observed 3/4; ann's shares 2/4,1/4,1/4 for 1,2,0;
    # bob's 1/4,2/4,1/4 → p_e = 0.5·0.25 + 0.25·0.5 + 0.25·0.25 = 0.3125; kappa = (0.75−0.3125)/(1−0.3125).
    from datetime import timedelta

    from django.utils import timezone

    for item, (a, b) in zip(items, [(1, 1), (1, 2), (2, 2), (0, 0)], strict=True):
        for person, verdict in ((ann, a), (bob, b)):
            Reservation.objects.create(
                item=item, user=person, swapped=False, expires_at=timezone.now() + timedelta(minutes=5)
            )
            do_submit(person, item.pk, verdict)
    report = agreement_report(items[0].debate.run)
    (pair,) = report.pairs
    assert (pair["n"], pair["agreement"].rate) == (4, 0.75)
    assert pair["kappa"] == pytest.approx((0.75 - 0.3125) / (1 - 0.3125))
    assert report.fleiss_items == 4
    assert report.fleiss_raters == 2
    assert report.fleiss is not None


def test_the_export_lists_every_verdict_with_the_order_each_person_saw(login, viewer, make_items):
    item = make_items(category="math")[0]
    person = make_user("p", "adjudicator")
    reservation = do_reserve_next(person)
    reservation.swapped = True
    reservation.save()
    do_submit(person, item.pk, 1)
    body = login(viewer).get(f"/adjudicate/runs/{item.debate.run_id}/export.jsonl").content.decode()
    row = json.loads(body.splitlines()[0])
    (verdict,) = row["verdicts"]
    assert verdict["saw_first"] == item.debate.shown[1].model.slug
    assert verdict["verdict"] == 2
    assert row["final_source"] == "human_unanimous"
    assert row["agents_saw_first"] == item.debate.shown[0].model.slug


def test_the_exports_are_served_as_csv_and_ndjson_downloads_with_one_csv_row_per_verdict(login, viewer, make_items):
    import csv
    import io

    items = make_items(required=2, category="math")
    for name, verdict in (("p", 1), ("q", 2)):
        person = make_user(name, "adjudicator")
        Reservation.objects.filter(pk=do_reserve_next(person).pk).update(swapped=False)  # the agents' order
        do_submit(person, items[0].pk, verdict)
    client = login(viewer)
    run = items[0].debate.run_id
    jsonl = client.get(f"/adjudicate/runs/{run}/export.jsonl")
    assert jsonl["Content-Type"].startswith("application/x-ndjson")
    assert jsonl["Content-Disposition"] == f'attachment; filename="adjudications-run-{run}.jsonl"'
    response = client.get(f"/adjudicate/runs/{run}/export.csv")
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    judged = [row for row in rows if row["item_id"] == str(items[0].pk)]
    assert sorted((row["person"], row["verdict"]) for row in judged) == [("p", "1"), ("q", "2")]
    assert len(rows) == len(judged) + len(items) - 1, "an item nobody judged yet is one row"
    assert not any(value.startswith("[") for row in rows for value in row.values()), "no verdict list in a cell"


def test_the_screen_heartbeat_extends_a_live_reservation_but_not_an_expired_one(login, adjudicator, make_items):
    from datetime import timedelta

    from django.utils import timezone

    item = make_items(category="math")[0]
    client = login(adjudicator)
    client.post("/adjudicate/start/")
    Reservation.objects.filter(item=item).update(expires_at=timezone.now() + timedelta(seconds=30))
    assert client.post(f"/adjudicate/items/{item.pk}/extend/").status_code == 204
    assert Reservation.objects.get(item=item).expires_at > timezone.now() + timedelta(minutes=5)
    Reservation.objects.filter(item=item).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert client.post(f"/adjudicate/items/{item.pk}/extend/").status_code == 410


def test_the_queue_says_when_tied_items_wait_for_an_admin(login, adjudicator, make_items):
    from evalhub.adjudication.models import AdjudicationItem, ItemStatus

    item = make_items(category="math")[0]
    AdjudicationItem.objects.filter(pk=item.pk).update(status=ItemStatus.NEEDS_ADMIN)
    body = login(adjudicator).get("/adjudicate/").content.decode()
    assert "1 item is out of the people's queue: tied with no majority" in body
    assert "An admin gives the final verdict." in body
    boss = make_user("boss", "admin", "adjudicator")
    assert "?status=needs_admin" in login(boss).get("/adjudicate/").content.decode()
    overview = login(boss).get("/adjudicate/all/?status=needs_admin").content.decode()
    assert f"/adjudicate/items/{item.pk}/review/" in overview


def test_a_submit_that_shows_the_next_item_reads_it_in_a_bounded_number_of_queries(
    login, adjudicator, make_items, django_assert_max_num_queries
):
    # Every submit renders the next item; under load each extra query is paid by everyone queued
    # behind it. 22: session and roles (3), the verdict (9), the next reservation (8: their hold, the
    # candidates, the row lock with its run, the recount, the insert and its event in a savepoint),
    # the screen (2). Others' reservations are counted only where this person's has expired.
    make_items(required=2, category="math")
    client = login(adjudicator)
    client.post("/adjudicate/start/")
    held = Reservation.objects.get(user=adjudicator)
    with django_assert_max_num_queries(22):
        response = client.post(f"/adjudicate/items/{held.item_id}/submit/", {"verdict": "1"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert Reservation.objects.get(user=adjudicator).item_id != held.item_id


def test_a_blind_first_verdict_takes_two_requests_each_in_a_bounded_number_of_queries(
    login, adjudicator, make_items, django_assert_max_num_queries
):
    # Blind-first (the default for runs with agents) doubles the requests a verdict takes, so each is
    # held to its count. The blind verdict, 14: session and roles (3), the verdict (7), this item's
    # screen again with its aid (4). The verdict after the aid, 25: as a one-stage submit, plus the
    # blind verdict it points to, the aid drawn for the next item (its blind verdicts counted in one
    # read) and the next screen's blind verdict.
    make_items(required=2, category="math", flow=BLIND_FIRST)
    client = login(adjudicator)
    client.post("/adjudicate/start/")
    held = Reservation.objects.get(user=adjudicator)
    submit = f"/adjudicate/items/{held.item_id}/submit/"
    with django_assert_max_num_queries(14):
        blind = client.post(submit, {"verdict": "1", "step": "blind"}, HTTP_HX_REQUEST="true")
    assert 'name="step" value="reveal"' in blind.content.decode()
    with django_assert_max_num_queries(25):
        final = client.post(submit, {"verdict": "2", "step": "reveal"}, HTTP_HX_REQUEST="true")
    assert final.status_code == 200
    assert Adjudication.objects.get(user=adjudicator).blind.verdict in (1, 2)
    assert Reservation.objects.get(user=adjudicator).item_id != held.item_id


def test_skip_shows_the_next_item_in_place(login, adjudicator, make_items):
    first, second = make_items(category="math")[:2]
    client = login(adjudicator)
    client.post("/adjudicate/start/")
    response = client.post(f"/adjudicate/items/{first.pk}/skip/", HTTP_HX_REQUEST="true")
    body = response.content.decode()
    assert response.status_code == 200
    assert f'data-item="{second.pk}"' in body
    assert second.debate.prompt.text in body
    assert Reservation.objects.get(user=adjudicator).item_id == second.pk


def test_a_prioritised_run_holds_for_every_next_item_not_the_first_only(login, adjudicator, make_items):
    """ "Prioritise a run" chose the first item only: after one verdict the queue went back to oldest first."""
    make_items(category="math", name="older")
    newer = make_items(category="code", name="newer")
    client = login(adjudicator)
    response = client.post("/adjudicate/start/", {"run": newer[0].debate.run_id})
    for item in newer:  # a verdict, and a skip, each lead to the chosen run's next item while it has any
        assert response.status_code == 302 and response.url == f"/adjudicate/items/{item.pk}/", item.pk
        action = "submit" if item.pk % 2 else "skip"
        response = client.post(f"/adjudicate/items/{item.pk}/{action}/", {"verdict": "1"})
    assert f'<option value="{newer[0].debate.run_id}" selected>' in client.get("/adjudicate/").content.decode()
    client.post("/adjudicate/start/", {"run": ""})  # oldest first again
    assert "selected>" not in client.get("/adjudicate/").content.decode()
