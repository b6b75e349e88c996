"""Django's admin is a door too (DESIGN conventions 16-17): a debate's verdict, an imported label's or a
response's text changed there reaches the boards as an action's write does. Before, the counts kept
saying the old verdict (the boards read the counts, not the rows) and cached boards kept the old
lengths, until something else happened to move them."""

from __future__ import annotations

import json

import pytest

from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.models import Judgment, Response
from evalhub.dashboards.counts import do_rebuild_tallies
from evalhub.debates.models import Debate
from evalhub.tallies.actions import is_stale, tally_version
from tests.admin_forms import FormFields, edited_in_admin
from tests.conftest import make_user
from tests.dashboards.test_counts import snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(client):
    client.force_login(make_user("root-admin", "admin", superuser=True))
    return client


def test_a_debates_verdict_changed_in_the_admin_is_counted_as_an_override_is(
    staff, arena, django_capture_on_commit_callbacks
):
    debate = arena.debate("alpha", "beta", verdict=1)  # alpha's response won
    arena.judge("openai:gpt-x", {debate: [1, 1, 1]})  # a judge that agreed with it
    version = tally_version()
    with django_capture_on_commit_callbacks(execute=True):
        edited_in_admin(staff, f"/admin/debates/debate/{debate.pk}/change/", verdict="2", winner="a")
    assert Debate.objects.get(pk=debate.pk).winner == "b", "who won follows the verdict, not a field of the form"
    kept = snapshot()
    assert [v for k, v in kept[0].items() if k[:3] == ("alpha", "beta", "consensus")] == [(0, 1, 0)]
    assert not is_stale() and tally_version() > version
    do_rebuild_tallies()
    assert snapshot() == kept, "the counts kept after the edit are a count from scratch"


def test_an_imported_labels_verdict_changed_in_the_admin_is_counted_again(
    staff, db, django_capture_on_commit_callbacks
):
    records = [
        {"instruction": f"Q{i}", "output_1": "x" * 10, "output_2": "y" * 20, "generator_1": "base",
         "generator_2": "cand", "annotator": "judge-a", "preference": 1.0}
        for i in range(3)
    ]  # fmt: skip
    do_import_judgments(
        filename="a.json", data=json.dumps(records).encode(), benchmark_slug="ae", allow_new_models=True
    )
    label = Judgment.objects.order_by("pk").first()
    with django_capture_on_commit_callbacks(execute=True):
        edited_in_admin(staff, f"/admin/catalog/judgment/{label.pk}/change/", verdict="2")
    kept = snapshot()
    assert list(kept[0].values()) == [(2, 1, 0)]  # two labels for the first model, one now for the second
    do_rebuild_tallies()
    assert snapshot() == kept


def test_a_responses_text_changed_in_the_admin_raises_the_boards_version(
    staff, arena, django_capture_on_commit_callbacks
):
    debate = arena.debate("alpha", "beta", verdict=1)
    version = tally_version()
    with django_capture_on_commit_callbacks(execute=True):
        edited_in_admin(staff, f"/admin/catalog/response/{debate.response_a_id}/change/", text="a much longer answer")
    assert Response.objects.get(pk=debate.response_a_id).text == "a much longer answer"
    assert tally_version() > version, "the cached boards read its length"


def test_an_items_outcome_is_not_a_field_of_the_admins_form(staff, arena):
    """An override goes through the review screen, with its reason in the audit trail, and reaches the
    debate; a form in the admin did neither and left the item and its debate saying two things."""
    from evalhub.adjudication.models import AdjudicationItem

    debate = arena.debate("alpha", "beta", verdict=None, status="unresolved")
    item = AdjudicationItem.objects.create(debate=debate, required_verdicts=1)
    edited_in_admin(
        staff, f"/admin/adjudication/adjudicationitem/{item.pk}/change/", final_verdict="1", status="resolved"
    )
    item.refresh_from_db()
    assert (item.final_verdict, item.status) == (None, "open")


def test_peoples_verdicts_and_the_audit_trail_are_shown_in_the_admin_never_deleted_or_added(staff, arena):
    from evalhub.adjudication.models import Adjudication, AdjudicationEvent, AdjudicationItem

    debate = arena.debate("alpha", "beta", verdict=None, status="unresolved")
    item = AdjudicationItem.objects.create(debate=debate, required_verdicts=1)
    person = make_user("ruth-rater", "adjudicator")
    Adjudication.objects.create(item=item, user=person, verdict=1, swapped=False, seconds_spent=12.0)
    AdjudicationEvent.objects.create(item=item, user=person, kind="submit", detail={})
    url = f"/admin/adjudication/adjudicationitem/{item.pk}/change/"
    page = staff.get(url).content.decode()
    assert 'name="adjudications-0-DELETE"' not in page and 'name="events-0-DELETE"' not in page, "no delete box"
    form = FormFields()
    form.feed(page)
    assert int(form.data["adjudications-MAX_NUM_FORMS"]) <= int(form.data["adjudications-INITIAL_FORMS"]), "no new row"
    deleting = {name.replace("-id", "-DELETE"): "on" for name in form.data if name.endswith("-0-id")}
    staff.post(url, {**form.data, **deleting, "_save": "Save"})  # a forged form
    assert Adjudication.objects.filter(item=item).count() == 1
    assert AdjudicationEvent.objects.filter(item=item).count() == 1


def test_a_debates_transcript_is_shown_in_the_admin_never_deleted_there(staff, arena):
    from evalhub.debates.models import DebateTurn

    debate = arena.debate("alpha", "beta", verdict=1)
    DebateTurn.objects.create(debate=debate, round=0, agent=0, agent_spec="heuristic", text="[[A]]", verdict=1)
    page = staff.get(f"/admin/debates/debate/{debate.pk}/change/").content.decode()
    assert 'name="turns-0-id"' in page, "the turn is shown"
    assert 'name="turns-0-DELETE"' not in page


def test_a_runs_configuration_is_not_a_field_of_the_admins_form(staff, arena):
    """Its form checks it (an agent's spec names a secret, never carries one: DESIGN convention 18), and its
    debates ran with it; the admin's form checked nothing."""
    run = arena.run("alpha", "beta")
    secret = '["openai:gpt-4o?api_key=sk-typed-into-a-spec"]'
    edited_in_admin(staff, f"/admin/debates/debaterun/{run.pk}/change/", name="renamed", agents=secret, rounds="9")
    run.refresh_from_db()
    assert (run.name, run.agents, run.rounds) == ("renamed", ["heuristic"], 3)


def test_a_hold_is_shown_and_freed_in_the_admin_never_made_or_changed_there(staff, arena):
    """Blind first, the aid a person sees is drawn at random and balanced per person; a hold changed in
    the admin could choose it, or hand the item to someone else."""
    from evalhub.adjudication.actions import do_reserve_next
    from evalhub.adjudication.models import AdjudicationItem, Reservation

    debate = arena.debate("alpha", "beta", verdict=None, status="unresolved")
    AdjudicationItem.objects.create(debate=debate, required_verdicts=1)
    person, other = make_user("ruth-rater", "adjudicator"), make_user("otto-other", "adjudicator")
    hold = do_reserve_next(person)
    url = f"/admin/adjudication/reservation/{hold.pk}/change/"
    edited_in_admin(staff, url, user=str(other.pk), swapped="on" if not hold.swapped else "", aid="debate")
    assert Reservation.objects.filter(pk=hold.pk, user=person, swapped=hold.swapped, aid=hold.aid).exists()
    assert staff.get("/admin/adjudication/reservation/add/").status_code == 403
    staff.post(f"/admin/adjudication/reservation/{hold.pk}/delete/", {"post": "yes"})
    assert not Reservation.objects.filter(pk=hold.pk).exists(), "freeing an item stays possible"
