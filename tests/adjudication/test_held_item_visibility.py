"""One rule for a held item, through every door (issue 78): until a person's blind verdict on an item
is stored, nothing of other people's verdicts, the agents' verdicts or the aid on it reaches them,
whatever other role they have. A table: every route x every role combination x (holding, not holding,
after the blind verdict)."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async as sync_to_async

from evalhub.adjudication.actions import do_override, do_reserve_next, do_submit, do_submit_blind
from evalhub.adjudication.views import WITHHELD_HEADER
from evalhub.debates.models import BLIND_FIRST, DebateTurn
from tests.conftest import make_user
from tests.jobs.helpers import open_socket

pytestmark = pytest.mark.django_db

AGENT_TEXT = "ARGUMENT-OF-THE-AGENTS"
OTHER_NOTE = "NOTE-OF-ANOTHER-PERSON"
HOLDING, NOT_HOLDING, AFTER_VERDICT = "holding", "not holding", "after the blind verdict"
ROLES = {
    "adjudicator + viewer": dict(roles=("adjudicator", "viewer")),
    "adjudicator + admin": dict(roles=("adjudicator", "admin")),
    "adjudicator + admin (staff)": dict(roles=("adjudicator", "admin"), superuser=True),
}


@pytest.fixture
def held(make_items):
    """A blind-first item another person has judged (with a note), still open for two more people."""
    item = make_items(flow=BLIND_FIRST, required=3)[0]
    DebateTurn.objects.create(debate=item.debate, round=0, agent=0, agent_spec="heuristic", text=AGENT_TEXT, verdict=1)
    other = make_user("bob-other", "adjudicator")
    assert do_reserve_next(other).item_id == item.pk
    do_submit_blind(other, item.pk, 1)
    do_submit(other, item.pk, 1, notes=OTHER_NOTE)
    return item


def person_in(state: str, item, roles: tuple[str, ...], superuser: bool = False):
    person = make_user("pat", *roles, superuser=superuser)
    if state in (HOLDING, AFTER_VERDICT):
        assert do_reserve_next(person).item_id == item.pk
    if state == AFTER_VERDICT:
        do_submit_blind(person, item.pk, 2)
    return person


def routes(item, roles: tuple[str, ...], superuser: bool) -> dict[str, object]:
    """route → how to tell from its response whether the held item's verdicts or turns were shown."""
    run, debate = item.debate.run_id, item.debate_id
    shown = {
        f"/debates/{debate}/": lambda r: r.status_code == 200 and AGENT_TEXT in r.content.decode(),
        f"/adjudicate/runs/{run}/export.jsonl": lambda r: OTHER_NOTE in r.content.decode(),
        f"/adjudicate/runs/{run}/export.csv": lambda r: OTHER_NOTE in r.content.decode(),
        f"/adjudicate/runs/{run}/agreement/": lambda r: "bob-other" in r.content.decode(),
    }
    if "admin" in roles:
        shown[f"/adjudicate/items/{item.pk}/review/"] = lambda r: "bob-other" in r.content.decode()
    if superuser:
        shown[f"/admin/adjudication/adjudicationitem/{item.pk}/change/"] = lambda r: r.status_code == 200
        shown[f"/admin/debates/debate/{debate}/change/"] = lambda r: r.status_code == 200
    return shown


@pytest.mark.parametrize("state", [HOLDING, NOT_HOLDING, AFTER_VERDICT])
@pytest.mark.parametrize("role", list(ROLES))
def test_a_held_item_reaches_nobody_before_their_blind_verdict_through_any_route(client, held, role, state):
    roles, superuser = ROLES[role]["roles"], ROLES[role].get("superuser", False)
    client.force_login(person_in(state, held, roles, superuser))
    seen = {url: bool(check(client.get(url))) for url, check in routes(held, roles, superuser).items()}
    if state == HOLDING:
        assert not any(seen.values()), f"{role}, {state}: shown by {[url for url, s in seen.items() if s]}"
    else:
        assert all(seen.values()), f"{role}, {state}: not shown by {[url for url, s in seen.items() if not s]}"


def test_an_export_says_how_many_held_items_it_left_out(client, held):
    client.force_login(person_in(HOLDING, held, ("adjudicator", "viewer")))
    run = held.debate.run_id
    for fmt in ("jsonl", "csv"):
        response = client.get(f"/adjudicate/runs/{run}/export.{fmt}")
        assert response[WITHHELD_HEADER] == "1"
        assert str(held.pk) not in [line.split(",")[0] for line in response.content.decode().splitlines()[1:]]
    assert "1 item you hold" in client.get(f"/adjudicate/runs/{run}/agreement/").content.decode()
    exported = client.get(f"/adjudicate/runs/{run}/export.jsonl").content.splitlines()
    others = [json.loads(line)["item_id"] for line in exported]
    assert held.pk not in others and others, "the run's other items are still exported"


def test_the_judge_lab_reads_a_blind_first_item_only_once_it_is_settled(
    client, held, django_capture_on_commit_callbacks
):
    """The judge lab is one cached report for everyone: an item still in blind adjudication is in it
    for nobody (its agents' and people's verdicts), then for everyone once settled."""
    carol = make_user("carol-other", "adjudicator")
    assert do_reserve_next(carol).item_id == held.pk
    do_submit_blind(carol, held.pk, 2)
    do_submit(carol, held.pk, 2)
    client.force_login(make_user("vic", "viewer"))
    assert client.get("/judges/report.json").json()["people"]["units"] == 0, "two people's verdicts, still open"
    with django_capture_on_commit_callbacks(execute=True):  # settling raises the counts' version on commit
        do_override(make_user("ad", "admin"), held.pk, 1, "settled by an admin")
    assert client.get("/judges/report.json").json()["people"]["units"] == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("state", [HOLDING, AFTER_VERDICT])
async def test_the_debate_socket_keeps_the_same_rule(make_items, state):
    item = await sync_to_async(lambda: make_items(flow=BLIND_FIRST)[0])()
    person = await sync_to_async(person_in)(state, item, ("adjudicator", "admin"))
    communicator, connected = await open_socket(f"/ws/debates/{item.debate_id}/", person)
    assert connected == (state == AFTER_VERDICT)
    if connected:
        await communicator.disconnect()


@pytest.mark.parametrize("state", [HOLDING, NOT_HOLDING, AFTER_VERDICT])
def test_a_judge_runs_inspect_log_through_the_api_keeps_the_same_rule(client, held, state, tmp_path):
    """The API's doors ask the same rule: a judge's verdict on a held debate is not in the log its reader
    downloads until their blind verdict is stored."""
    from inspect_ai.log import read_eval_log

    from evalhub.accounts.actions import do_create_token
    from evalhub.debates.models import JudgeRun, JudgeVerdict

    run = JudgeRun.objects.create(reference=held.debate.run, judge="heuristic")
    JudgeVerdict.objects.create(
        judge_run=run, debate=held.debate, reversed_order=False, sample=0, text="JUDGE", verdict=1
    )
    token = do_create_token(person_in(state, held, ("adjudicator", "viewer")), "CI", "read", 30)[1]
    answer = client.get(f"/api/v1/judge-runs/{run.pk}/inspect-log", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200
    (tmp_path / "run.eval").write_bytes(answer.content)
    log = read_eval_log(str(tmp_path / "run.eval"))
    shown = {sample.metadata["debate"] for sample in log.samples or []}
    assert (held.debate_id in shown) == (state != HOLDING)
    assert log.eval.metadata["pairs_withheld"] == (1 if state == HOLDING else 0)
