"""The quickstart's blind-first adjudication: a debate run of the offline heuristic agents whose
unresolved debates two simulated people adjudicate through the same actions as a person on the
screen, so the run's agreement page shows how much each aid moved them on first login.

The people are simulated, and say so: each pair has a side the people lean to (drawn from the seed
and the prompt's id in the file) and each person gives it as their blind verdict 80 % of the time.
A person who gave it keeps it; one who did not, having seen the aid, takes the agents' majority with
the debate 70 % of the time, the critic's verdict with a critique 40 % of the time, and keeps their
own with no aid. Their numbers show the page, not anything about people.

Every draw is keyed by the seed, the person's place and the prompt's id in the file, never by a
database id. The aid a person is shown still follows their user id, as for real people, but only
verdicts that differ from the lean can move, so which pairs both people settle on the lean (and
are resolved) is the same wherever the database's ids start.
"""

from __future__ import annotations

import random

from django.contrib.auth import get_user_model

from evalhub.adjudication.actions import do_reserve_next, do_skip, do_submit, do_submit_blind
from evalhub.adjudication.models import BlindVerdict
from evalhub.core.scaleeval.aids import AIDS, CRITIQUE, DEBATE, critic_of, majority
from evalhub.core.statistics.agreement import unswap
from evalhub.debates.actions import do_create_run, do_start_run
from evalhub.debates.demo import demo_run_fields
from evalhub.debates.models import DebateRun
from evalhub.jobs.cli import work_here

DEMO_BLIND_RUN_NAME = "Demo: blind-first adjudication by two simulated people (demo numbers)"
SIMULATED_PEOPLE = ("simulated-person-1", "simulated-person-2")
FOLLOWS = {DEBATE: 0.7, CRITIQUE: 0.4}  # how often a simulated person takes the aid's verdict
LEANS = 0.8  # how often a simulated person's blind verdict is the side people lean to on the pair


def do_demo_blind_first_adjudication(seed: int = 0) -> DebateRun | None:
    """Run the demo's blind-first debate run here (offline agents: milliseconds) and have the simulated
    people adjudicate it; once only."""
    if DebateRun.objects.filter(name=DEMO_BLIND_RUN_NAME).exists():
        return None
    run = do_create_run(
        name=DEMO_BLIND_RUN_NAME,
        **demo_run_fields(),
        rounds=1,  # no discussion: the agents disagree more often, and people get more items
        human_verdicts=len(SIMULATED_PEOPLE),
        seed=seed,
        aids=list(AIDS),
    )
    run = do_start_run(run, enqueue=False)
    assert run.job is not None  # do_start_run made it
    work_here(run.job)
    users = get_user_model()
    for place, username in enumerate(SIMULATED_PEOPLE):
        person, created = users.objects.get_or_create(username=username)
        if created:
            person.set_unusable_password()  # nobody logs in as a simulated person
            person.save()
        _adjudicate_as(person, place, run)
    return run


def _adjudicate_as(person, place: int, run: DebateRun) -> None:
    while (reservation := do_reserve_next(person, prefer_run=run.pk)) is not None:
        debate = reservation.item.debate
        if debate.run_id != run.pk:  # every item of the demo run done: leave the others to real people
            do_skip(reservation)
            return
        pair = debate.prompt.external_id
        lean = random.Random(f"{run.seed}:{pair}:lean").choice((1, 2, 0))  # in the run's order, not the shown one
        rng = random.Random(f"{run.seed}:{pair}:{place}")
        others = [verdict for verdict in (1, 2, 0) if verdict != lean]
        blind = lean if rng.random() < LEANS else rng.choice(others)
        follows = rng.random()  # drawn whatever the aid, so the aid changes no later draw
        seen = unswap(blind) if reservation.swapped else blind
        do_submit_blind(person, reservation.item_id, seen)
        aid = BlindVerdict.objects.get(item=reservation.item, user=person).aid
        verdicts = {turn.agent: turn.verdict for turn in debate.turns.filter(round=0)}
        suggested = {
            DEBATE: majority(list(verdicts.values())),
            CRITIQUE: verdicts.get(critic_of(run.seed, reservation.item_id, [a + 1 for a in verdicts]) - 1)
            if verdicts
            else None,
        }.get(aid)
        final = seen
        if blind != lean and suggested is not None and follows < FOLLOWS.get(aid, 0.0):
            final = unswap(suggested) if reservation.swapped else suggested  # in the order this person sees
        do_submit(person, reservation.item_id, final)
