"""Running debates against the database: outcomes, mapping back, resume, pause, privileged information."""

from __future__ import annotations

import asyncio
import re
import threading
import time

import pytest
from django.db import OperationalError, connections
from django.test import override_settings

from evalhub.adjudication.models import AdjudicationItem
from evalhub.core.prompts import sections as ps
from evalhub.core.runs.usage import Usage
from evalhub.debates.actions import do_start_run
from evalhub.debates.models import DebateStatus, DebateTurn, Winner
from evalhub.debates.runner import run_debate
from evalhub.jobs.actions import do_request_stop
from evalhub.jobs.models import Job, JobStatus
from evalhub.jobs.runners import work_chunk
from evalhub.llm import interrupt
from evalhub.llm.types import ProviderUnavailable
from tests.debates.conftest import sections_of

pytestmark = pytest.mark.django_db(transaction=True)


def start(run):
    """The run's job and chunks, left for the test to work (as `run_debates` does in-process)."""
    return do_start_run(run, enqueue=False)


def test_a_judge_that_always_prefers_model_a_maps_back_to_a_whatever_order_was_shown(make_run, agents):
    run = start(make_run())
    first, second, third = run.debates.order_by("id")
    for debate, swapped in ((first, True), (second, False), (third, True)):  # both orders, whatever the draw
        debate.swapped = swapped
        debate.save(update_fields=["swapped"])
    a_texts = {d.response_a.text for d in run.debates.select_related("response_a")}

    def prefer_a(agent, messages):
        return "A is better.\n" + ("1" if sections_of(messages)[ps.SUBMISSION_1] in a_texts else "2")

    agents(prefer_a)
    for debate in run.debates.all():
        assert run_debate(debate.pk) == DebateStatus.CONSENSUS
    debates = list(run.debates.all())
    assert [d.winner for d in debates] == [Winner.A] * 3
    assert all(d.verdict == (2 if d.swapped else 1) for d in debates)


def test_disagreement_to_the_end_creates_an_adjudication_item_with_the_unresolved_status(make_run, agents):
    run = start(make_run(rounds=2))
    agents(lambda agent, messages: f"My view.\n{1 + agent % 2}")
    debate = run.debates.first()
    assert run_debate(debate.pk) == DebateStatus.UNRESOLVED
    debate.refresh_from_db()
    assert (debate.rounds_used, debate.winner, debate.turns.count()) == (2, "", 6)
    assert AdjudicationItem.objects.get(debate=debate).status == "open"


def test_a_provider_failure_fails_the_debate_and_a_resume_asks_only_for_missing_turns(make_run, agents):
    run = start(make_run())
    debate = run.debates.first()
    failing = {"on": True}

    def flaky(agent, messages):
        if "Speaker" in messages[-1]["content"] and agent == 2 and failing["on"]:
            return ProviderUnavailable("scripted", "m", "server error (HTTP 500) (gave up after 6 attempts)")
        return f"x\n{1 if agent else 2}"

    log = agents(flaky)
    assert run_debate(debate.pk) == DebateStatus.FAILED
    debate.refresh_from_db()
    assert "HTTP 500" in debate.error
    assert debate.turns.count() == 5  # round 0, and two of round 1
    failing["on"] = False
    asked_before = len(log)
    do_start_run(run)  # eager in tests: the failed debate runs again at once
    debate.refresh_from_db()
    assert len(log) - asked_before >= 1
    assert debate.status in {DebateStatus.CONSENSUS, DebateStatus.UNRESOLVED}
    rounds_agents = list(DebateTurn.objects.filter(debate=debate).values_list("round", "agent"))
    assert len(rounds_agents) == len(set(rounds_agents)), "no turn is stored twice"
    assert (1, 2) in rounds_agents


def test_a_paused_run_does_not_start_its_debates_and_resumes_later(make_run, agents):
    run = start(make_run())
    log = agents(lambda agent, messages: "x\n1")
    job = do_request_stop(run.job, "pause")
    assert job.status == JobStatus.PAUSED, "nothing was in hand: paused at once"
    [chunk] = job.chunks.all()
    assert work_chunk(chunk.pk) == JobStatus.PAUSED
    assert not log
    do_start_run(run)  # resumes: eager in tests
    assert set(run.debates.values_list("status", flat=True)) == {DebateStatus.CONSENSUS}
    assert Job.objects.get(pk=run.job_id).status == JobStatus.SUCCEEDED


@override_settings(EVALHUB_HEARTBEAT_SECONDS=0.05)
def test_a_run_paused_mid_debate_stops_every_debate_of_the_chunk_between_calls_and_resumes(make_run, agents):
    run = start(make_run())
    paused = threading.Event()

    def pause_during_round_0(agent, messages):
        if not paused.is_set():  # as a user would, from another thread, while the agents answer
            paused.set()
            worker = threading.Thread(
                target=lambda: (do_request_stop(Job.objects.get(pk=run.job_id), "pause"), connections.close_all())
            )
            worker.start()
            worker.join()
            time.sleep(0.3)  # the chunk's heartbeat reads the request within 0.05 s
        return f"x\n{1 + agent % 2}"  # disagree, so every debate would go on to round 1

    log = agents(pause_during_round_0)
    ids = list(run.debates.values_list("id", flat=True))
    [chunk] = run.job.chunks.all()
    assert work_chunk(chunk.pk) == "pause"
    job = Job.objects.get(pk=run.job_id)
    assert job.status == JobStatus.PAUSED
    assert job.progress_done == 0
    assert set(run.debates.values_list("status", flat=True)) == {DebateStatus.PENDING}
    # Calls already in flight answered and were stored; no call started after the stop was seen.
    rounds = list(DebateTurn.objects.filter(debate__run=run).values_list("debate_id", "round", "agent"))
    assert len(log) == len(rounds) < 3 * 3 * len(ids)
    do_start_run(run)  # resumes: eager in tests
    stored = list(DebateTurn.objects.filter(debate__run=run).values_list("debate_id", "round", "agent"))
    assert len(stored) == len(set(stored)), "no turn is stored twice"
    assert set(rounds) <= set(stored)
    assert set(run.debates.values_list("status", flat=True)) == {DebateStatus.UNRESOLVED}
    assert Job.objects.get(pk=run.job_id).status == JobStatus.SUCCEEDED


def test_an_unparsable_answer_is_reasked_then_stored_as_an_invalid_turn(make_run, agents):
    run = start(make_run(rounds=1))
    agents(lambda agent, messages: "I refuse to give a number." if agent == 0 else "ok\n1")
    debate = run.debates.first()
    assert run_debate(debate.pk) == DebateStatus.UNRESOLVED
    turn = debate.turns.get(agent=0)
    assert (turn.verdict, turn.reasked, turn.valid) == (None, True, False)


def test_privileged_information_reaches_agents_only_when_the_run_turns_it_on(make_run, agents):
    log = agents(lambda agent, messages: "x\n1")
    with_info = start(make_run(name="with", privileged_sources=["reference_answer"]))
    without = start(make_run(name="without"))
    for run in (with_info, without):
        run_debate(run.debates.get(prompt__external_id="math-01").pk)
    prompts = [m[-1]["content"] for m in log]
    assert sum("$50 (0.8 × P = 40)." in p for p in prompts) == 3, "three agents of the run with it, round 0"
    marked = [p for p in prompts if "$50 (0.8 × P = 40)." in p]
    assert all("[Reference answer (visible to evaluators only" in p for p in marked)


def test_the_usage_of_a_run_sums_its_turns_on_its_job(make_run, agents):
    run = start(make_run(rounds=1))
    agents(lambda agent, messages: "x\n1")
    for debate in run.debates.all():
        run_debate(debate.pk)
    job = Job.objects.get(pk=run.job_id)
    # Each scripted call reports 2 of its 5 output tokens spent reasoning: a debate counted none of them.
    assert job.usage_value == Usage(
        calls=9, input_tokens=90, output_tokens=45, calls_without_price=9, reasoning_tokens=18
    )


def test_the_calls_of_a_debate_that_failed_are_counted_in_its_jobs_usage(make_run, agents):
    from evalhub.llm.types import RequestRejected

    run = start(make_run(rounds=1))
    # Agents 0 and 1 answer; agent 2's call is refused: each debate fails after two paid calls.
    agents(lambda agent, messages: RequestRejected("scripted", "scripted", "refused") if agent == 2 else "x\n1")
    debates = list(run.debates.all())
    assert {run_debate(debate.pk) for debate in debates} == {DebateStatus.FAILED}
    job = Job.objects.get(pk=run.job_id)
    stored = sum(debate.turns.count() for debate in debates)
    assert stored and job.usage_value.calls == stored and job.usage_value.input_tokens == 10 * stored


def test_the_heuristic_panel_gives_consensus_changed_minds_and_unresolved_debates_offline(make_run):
    run = start(
        make_run(
            agents=["heuristic", "heuristic:reference", "heuristic:detail"],
            category="",
            privileged_sources=["reference_answer"],
        )
    )
    statuses = [run_debate(d.pk) for d in run.debates.all()]
    assert DebateStatus.CONSENSUS in statuses
    assert DebateStatus.UNRESOLVED in statuses
    changed = [
        d for d in run.debates.all() if any(len({t.verdict for t in d.turns.filter(agent=a)}) > 1 for a in range(3))
    ]
    assert changed, "at least one agent changed its mind in discussion"


def test_a_reasked_turn_keeps_its_rejected_first_answer_beside_the_second(make_run, agents, client):
    from tests.conftest import make_user

    run = start(make_run(rounds=1))
    answers = {}

    def first_prose_then_a_verdict(agent, messages):
        if agent == 0 and not answers.get("asked"):
            answers["asked"] = True
            return "Submission 1 explains more, so I lean that way."  # no verdict on its last line
        return "ok\n1"

    agents(first_prose_then_a_verdict)
    debate = run.debates.first()
    run_debate(debate.pk)
    turn = debate.turns.get(agent=0)
    assert (turn.verdict, turn.reasked, turn.text) == (1, True, "ok\n1")
    assert turn.rejected_text == "Submission 1 explains more, so I lean that way."
    client.force_login(make_user("v", "viewer"))
    page = client.get(debate.get_absolute_url()).content.decode()
    assert "First answer (no verdict on its last line" in page
    assert "so I lean that way." in page


@override_settings(EVALHUB_HEARTBEAT_SECONDS=0.05)
@pytest.mark.parametrize("stop", ["cancel", "pause"])
def test_a_run_stopped_mid_chunk_tells_one_story_on_every_page(make_run, monkeypatch, stop, client, admin_user):
    """Settled debates are kept and counted as they settle: after Pause or Cancel mid-chunk the job,
    the run page, /debates/, /jobs/ and the adjudication queue agree on how many were kept."""
    from evalhub.debates.actions import run_counts
    from tests.debates.conftest import ScriptedAgent

    run = start(make_run(rounds=2))
    agreeing, splitting, slow = run.debates.select_related("response_a", "response_b").order_by("id")
    texts = {d.pk: {d.response_a.text, d.response_b.text} for d in (agreeing, splitting, slow)}
    asked, requested = threading.Event(), threading.Event()

    def stop_once_two_settled():
        try:
            for _ in range(1500):  # SQLite lets one writer in at a time: a locked table is tried again
                try:
                    if run_counts(run)["finished"] >= 2:
                        do_request_stop(Job.objects.get(pk=run.job_id), stop)
                        requested.set()
                        return
                except OperationalError:
                    pass
                time.sleep(0.02)
        finally:
            connections.close_all()

    class Agent(ScriptedAgent):
        async def _complete_once(self, messages, sampling):
            if sections_of(messages)[ps.SUBMISSION_1] in texts[slow.pk]:
                if not asked.is_set():  # the user stops the run while the third debate is under way
                    asked.set()
                    threading.Thread(target=stop_once_two_settled).start()
                # Held here until the heartbeat has read the request (the call then stops), however slow
                # the machine: the third debate cannot finish before the stop lands.
                deadline = time.monotonic() + 60
                while time.monotonic() < deadline:
                    if requested.is_set():
                        interrupt.check()
                    await asyncio.sleep(0.02)
            return await super()._complete_once(messages, sampling)

    def decide(agent, messages):
        if sections_of(messages)[ps.SUBMISSION_1] in texts[agreeing.pk]:
            return "x\n1"
        return f"x\n{1 + agent % 2}"  # the others never agree: the second goes to people

    monkeypatch.setattr(
        "evalhub.debates.runner.chat_client",
        lambda spec, meter=None: Agent(lambda m: decide(int(str(spec)[-1]), m), []),
    )
    [chunk] = Job.objects.get(pk=run.job_id).chunks.all()
    work_chunk(chunk.pk)
    job = Job.objects.get(pk=run.job_id)
    assert job.status == (JobStatus.CANCELLED if stop == "cancel" else JobStatus.PAUSED)
    counts = run_counts(run)
    assert (counts["finished"], counts["consensus"], counts["unresolved"]) == (2, 1, 1)
    assert job.progress_done == 2, "the job counts the debates that were kept"
    assert "2 of 3 done are kept" in job.message
    assert AdjudicationItem.objects.filter(debate__run=run).count() == 1, "the unresolved one waits for people"
    client.force_login(admin_user)
    for url in (run.get_absolute_url(), "/debates/"):
        assert "2 of 3 debates finished" in client.get(url).content.decode(), url
    for url in (f"/jobs/{run.job_id}/", "/jobs/"):
        page = client.get(url).content.decode()
        assert re.search(r"\b2( of |/)3\b", page), url
        assert not re.search(r"\b0( of |/)3\b", page), url
    if stop == "pause":
        monkeypatch.setattr(
            "evalhub.debates.runner.chat_client", lambda spec, meter=None: ScriptedAgent(lambda m: "x\n1", [])
        )
        do_start_run(run)  # eager in tests: the rest runs now
        job = Job.objects.get(pk=run.job_id)
        assert job.status == JobStatus.SUCCEEDED
        assert job.progress_done == run_counts(run)["finished"] == 3
