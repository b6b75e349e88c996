"""Blind first, then the aid: a person's verdict before any aid is stored before the aid reaches them,
kept as it was, and the verdict after the reveal is stored beside it."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from channels.db import database_sync_to_async as sync_to_async

from evalhub.adjudication.actions import AdjudicationRejected, do_reserve_next, do_submit, do_submit_blind
from evalhub.adjudication.models import Adjudication, AdjudicationEvent, BlindVerdict, Reservation
from evalhub.adjudication.reports import imported_gold
from evalhub.catalog.models import Judgment, LanguageModel
from evalhub.core.scaleeval.aids import AIDS, CRITIQUE, DEBATE, NO_AID, aid_for, critic_of
from evalhub.debates.models import BLIND_FIRST, DebateTurn
from tests.conftest import make_user
from tests.jobs.helpers import open_socket

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def with_turns(item, rounds: int = 2, agents: int = 3) -> dict[tuple[int, int], str]:
    """Give the item's debate turns whose texts are easy to find in a page: (round, agent) → text."""
    texts = {}
    for round_ in range(rounds):
        for agent in range(agents):
            texts[(round_, agent)] = f"ARGUMENT-OF-AGENT-{agent}-IN-ROUND-{round_}"
            DebateTurn.objects.create(
                debate=item.debate,
                round=round_,
                agent=agent,
                agent_spec="heuristic",
                text=texts[(round_, agent)],
                verdict=1,
            )
    return texts


def blind_items(make_items, aids, category="math", **fields):
    return make_items(category=category, flow=BLIND_FIRST, aids=list(aids), **fields)


def post(client, item, step, verdict, **extra):
    data = {"step": step, "verdict": str(verdict), **extra}
    return client.post(f"/adjudicate/items/{item.pk}/submit/", data, headers=HTMX)


def test_the_debate_reaches_a_person_only_after_their_blind_verdict_is_stored(login, adjudicator, make_items):
    item = blind_items(make_items, [DEBATE])[0]
    texts = with_turns(item)
    client = login(adjudicator)
    screen_url = client.post("/adjudicate/start/").url
    for _ in range(2):  # a reload, or a second tab
        body = client.get(screen_url).content.decode()
        assert not any(text in body for text in texts.values())
        assert "Blind first" in body
    # A forged final verdict (the step that follows the reveal) is refused, and reveals nothing.
    forged = post(client, item, "reveal", 1)
    assert "before the aid is shown" in forged.content.decode()
    assert not any(text in forged.content.decode() for text in texts.values())
    assert not Adjudication.objects.exists()

    revealed = post(client, item, "blind", 1).content.decode()
    assert BlindVerdict.objects.filter(item=item, user=adjudicator).exists()
    assert all(text in revealed for text in texts.values()), "the whole debate, once the blind verdict is in"
    assert "Your blind verdict" in revealed
    assert all(text in client.get(screen_url).content.decode() for text in texts.values())


def test_a_changed_mind_is_recorded_beside_the_blind_verdict_which_stays_as_it_was(login, adjudicator, make_items):
    item = blind_items(make_items, [DEBATE])[0]
    client = login(adjudicator)
    client.post("/adjudicate/start/")
    swapped = Reservation.objects.get(user=adjudicator).swapped
    post(client, item, "blind", 1)
    post(client, item, "blind", 2)  # a second tab's blind verdict changes nothing
    post(client, item, "reveal", 2, confidence="2")
    blind = BlindVerdict.objects.get(item=item)
    final = Adjudication.objects.get(item=item)
    assert blind.verdict == (2 if swapped else 1), "stored in the agents' order"
    assert final.verdict == (1 if swapped else 2)
    assert final.blind == blind and final.changed_after_reveal is True
    assert final.seconds_spent >= blind.seconds_spent
    assert AdjudicationEvent.objects.filter(item=item, kind="blind_verdict").count() == 1
    assert AdjudicationEvent.objects.get(item=item, kind="submitted").detail["changed_after_reveal"] is True


def test_a_final_verdict_without_a_blind_one_is_refused_by_the_action(adjudicator, make_items):
    item = blind_items(make_items, AIDS)[0]
    do_reserve_next(adjudicator)
    with pytest.raises(AdjudicationRejected, match="before the aid"):
        do_submit(adjudicator, item.pk, 1)
    blind, created = do_submit_blind(adjudicator, item.pk, 0)
    assert created and do_submit_blind(adjudicator, item.pk, 1) == (blind, False)
    adjudication, _ = do_submit(adjudicator, item.pk, 0)
    assert adjudication.changed_after_reveal is False


def test_the_critique_aid_shows_one_agents_final_argument_and_nothing_else(login, adjudicator, make_items):
    item = blind_items(make_items, [CRITIQUE])[0]
    texts = with_turns(item, rounds=2, agents=3)
    client = login(adjudicator)
    client.post("/adjudicate/start/")
    body = post(client, item, "blind", 0).content.decode()
    critic = critic_of(item.debate.run.seed, item.pk, [1, 2, 3])
    shown = [key for key, text in texts.items() if text in body]
    assert shown == [(1, critic - 1)], "the last round's argument of the agent drawn from the seed"
    assert "final argument" in body


def test_no_aid_is_the_control_and_enter_keeps_the_verdict(login, adjudicator, make_items):
    item = blind_items(make_items, [NO_AID])[0]
    texts = with_turns(item)
    client = login(adjudicator)
    client.post("/adjudicate/start/")
    body = post(client, item, "blind", 2).content.decode()
    assert not any(text in body for text in texts.values())
    assert "No aid on this item" in body
    assert 'value="2" checked' in body, "the blind verdict is chosen already: Enter keeps it"
    post(client, item, "reveal", 2)
    assert Adjudication.objects.get(item=item).changed_after_reveal is False


def test_each_person_gets_every_aid_equally_often_and_the_seed_says_which(adjudicator, make_items):
    items = blind_items(make_items, AIDS, category="")
    assert len(items) >= 6
    seen = []
    for _ in range(6):
        reservation = do_reserve_next(adjudicator)
        seen.append(reservation.aid)
        do_submit_blind(adjudicator, reservation.item_id, 1)
        do_submit(adjudicator, reservation.item_id, 1)
    assert Counter(seen) == {aid: 2 for aid in AIDS}
    seed = items[0].debate.run.seed
    assert seen == [aid_for(seed, adjudicator.pk, position, AIDS) for position in range(6)]
    assert list(BlindVerdict.objects.order_by("id").values_list("aid", flat=True)) == seen


def test_the_one_stage_flow_shows_the_debate_at_once_and_says_so(login, adjudicator, make_items):
    item = make_items(category="math")[0]  # one stage
    texts = with_turns(item)
    client = login(adjudicator)
    body = client.get(client.post("/adjudicate/start/").url).content.decode()
    assert all(text in body for text in texts.values())
    assert "shows the agents' debate from the start" in body
    post(client, item, "one_stage", 1)
    assert Adjudication.objects.get(item=item).blind is None
    assert not BlindVerdict.objects.exists()


def test_a_second_person_gets_their_own_blind_step(login, adjudicator, make_items):
    item = blind_items(make_items, [DEBATE], required=2)[0]
    texts = with_turns(item)
    first = make_user("first-person", "adjudicator")
    do_reserve_next(first)
    do_submit_blind(first, item.pk, 1)
    client = login(adjudicator)
    body = client.get(client.post("/adjudicate/start/").url).content.decode()
    assert not any(text in body for text in texts.values()), (
        "another person's blind verdict reveals nothing to this one"
    )


def test_a_person_who_also_reads_results_cannot_open_the_debate_page_before_their_blind_verdict(login, make_items):
    item = blind_items(make_items, [DEBATE])[0]
    texts = with_turns(item)
    both = make_user("reads-and-judges", "adjudicator", "viewer")
    client = login(both)
    client.post("/adjudicate/start/")
    page = client.get(f"/debates/{item.debate_id}/")
    assert page.status_code == 403
    assert "after your blind verdict" in page.content.decode()
    assert not any(text in page.content.decode() for text in texts.values())
    post(client, item, "blind", 1)
    page = client.get(f"/debates/{item.debate_id}/")
    assert page.status_code == 200
    assert texts[(0, 0)] in page.content.decode()  # the run has one agent: its page lists that agent's turns


@pytest.mark.django_db(transaction=True)
async def test_nor_its_socket(make_items):
    item = (await sync_to_async(blind_items)(make_items, [DEBATE]))[0]
    both = await sync_to_async(make_user)("reads-and-judges", "adjudicator", "viewer")
    await sync_to_async(do_reserve_next)(both)
    _, connected = await open_socket(f"/ws/debates/{item.debate_id}/", both)
    assert not connected, "refused while the blind verdict is pending"
    await sync_to_async(do_submit_blind)(both, item.pk, 1)
    communicator, connected = await open_socket(f"/ws/debates/{item.debate_id}/", both)
    assert connected
    await communicator.disconnect()


def test_people_who_copy_the_agents_show_on_the_run_page_and_both_verdicts_in_the_exports(
    login, admin_user, make_items
):
    items = blind_items(make_items, [DEBATE, NO_AID], category="")
    for item in items:  # the agents' last round: a majority for submission 1
        for agent, verdict in enumerate((1, 1, 2)):
            DebateTurn.objects.create(
                debate=item.debate, round=0, agent=agent, agent_spec="heuristic", text="t", verdict=verdict
            )
    person = make_user("copier", "adjudicator")
    for _ in items:
        reservation = do_reserve_next(person)
        seen_first = 2 if reservation.swapped else 1  # the agents' submission 1, in this person's order
        do_submit_blind(person, reservation.item_id, 0)  # blind: neither
        do_submit(person, reservation.item_id, seen_first if reservation.aid == DEBATE else 0)
    run = items[0].debate.run
    body = login(admin_user).get(f"/adjudicate/runs/{run.pk}/agreement/").content.decode()
    assert "How much the aid moved people" in body
    debate_row = body.split("the agents&#x27; debate</td>")[1].split("</tr>")[0]
    assert "+1.000" in debate_row, "every verdict changed after the debate"
    control_row = body.split("no aid (control)</td>")[1].split("</tr>")[0]
    assert "0.000" in control_row
    exported = login(admin_user).get(f"/adjudicate/runs/{run.pk}/export.csv").content.decode()
    header = exported.splitlines()[0]
    for column in ("aid", "blind_verdict", "blind_winner", "blind_seconds", "blind_at", "changed_after_reveal"):
        assert column in header
    jsonl = login(admin_user).get(f"/adjudicate/runs/{run.pk}/export.jsonl").content.decode()
    first = json.loads(jsonl.splitlines()[0])["verdicts"][0]
    assert first["blind_verdict"] == 0 and first["aid"] in (DEBATE, NO_AID)
    assert first["changed_after_reveal"] == (first["aid"] == DEBATE)


def test_gold_is_the_verdict_imported_people_agree_on_in_either_order(make_items):
    first, second, third = blind_items(make_items, [DEBATE])[:3]
    person = LanguageModel.objects.create(slug="crowd", display_name="Crowd", is_human=True)
    other = LanguageModel.objects.create(slug="crowd-2", display_name="Crowd 2", is_human=True)
    criterion = first.debate.run.criterion

    def label(debate, judge, verdict, reversed_=False):
        one, two = debate.shown
        if reversed_:
            one, two = two, one
        Judgment.objects.create(criterion=criterion, judge_model=judge, response=one, response_2=two, verdict=verdict)

    label(first.debate, person, 1)
    label(first.debate, other, 2, reversed_=True)  # the same verdict, shown the other way round
    label(second.debate, person, 1)
    label(second.debate, other, 2)  # people disagree: no gold
    debates = [first.debate, second.debate, third.debate]
    assert imported_gold(first.debate.run, debates) == {first.debate.pk: 1}
