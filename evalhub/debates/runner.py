"""Running one debate: the pure engine (evalhub.core.scaleeval.debate) wired to model clients, the
database and the browsers watching.

Each finished turn is stored before the next round starts, so a worker that dies mid-debate
loses at most the turns in flight; running the debate again resumes from what is stored.
Agents stream: their text reaches watching browsers chunk by chunk as it is produced.
"""

from __future__ import annotations

import asyncio
import logging
import time
import zlib
from dataclasses import dataclass
from typing import Any

from django.db.models import prefetch_related_objects

from evalhub.core.prompts.criteria_variants import criteria_text
from evalhub.core.runs.outcomes import ComponentFailure, Outcome
from evalhub.core.runs.usage import CallStats
from evalhub.core.scaleeval.debate import DebateSetup, Turn
from evalhub.core.scaleeval.debate import run_debate as run_protocol
from evalhub.debates import live
from evalhub.debates.actions import (
    DEBATES_PER_TASK,
    RunRejected,
    broadcast_run,
    check_pairs,
    debate_queue,
    do_claim_debates,
    do_create_debates,
    do_finish_debates,
    do_record_turns,
    do_release_debate,
    run_counts,
)
from evalhub.debates.config import DEBATE, DebateConfig
from evalhub.debates.models import Debate, DebateRun, DebateStatus, DebateTurn
from evalhub.jobs.chunks import Settled
from evalhub.jobs.models import Job, JobChunk
from evalhub.jobs.runners import JobRunner, Plan
from evalhub.live import outbox, send_html
from evalhub.llm import event_loop
from evalhub.llm.base import ChatClient
from evalhub.llm.interrupt import Interrupted
from evalhub.llm.types import LLMError
from evalhub.system.db_thread import DatabaseThread, GroupCommit
from evalhub.system.model_access import chat_client

logger = logging.getLogger(__name__)
FLUSH_INTERVAL_S = 0.04
PRIVILEGED_TITLES = {"reference_answer": "Reference answer", "rating_guidelines": "Rating guidelines"}


def build_setup(debate: Debate) -> DebateSetup:
    run, prompt = debate.run, debate.prompt
    first, second = debate.shown
    available = prompt.privileged_information()
    privileged = {
        PRIVILEGED_TITLES.get(name, name.replace("_", " ").capitalize()): available[name]
        for name in run.privileged_sources
        if name in available
    }
    criterion = run.criterion
    return DebateSetup(
        question=prompt.text,
        submission_1=first.text,
        submission_2=second.text,
        criteria=criteria_text(criterion.name, criterion.definition, criterion.levels),
        agents=len(run.agents),
        rounds=run.rounds,
        rule=run.consensus_rule,
        history=run.history,
        privileged=privileged,
    )


def stored_turns(debate: Debate) -> list[Turn]:
    return [
        Turn(
            t.agent,
            t.round,
            t.text,
            t.verdict,
            t.reasked,
            CallStats(t.input_tokens, t.output_tokens, t.latency_s, t.cached, t.cost_usd),
            t.rejected_text,
        )
        for t in debate.turns.all()
    ]


def turn_seed(run: DebateRun, debate_id: int, agent: int, round_number: int) -> int | None:
    """A per-turn seed derived from the run's, so sampled runs repeat (and cache) exactly."""
    if run.temperature == 0:
        return None
    return zlib.crc32(f"{run.seed}:{debate_id}:{agent}:{round_number}".encode())


def run_debate(debate_id: int) -> str:
    """Run or resume one debate; returns its status. Safe to call twice (the second call finds it done)."""
    return run_debates([debate_id])[debate_id]


def run_debates(debate_ids: list[int]) -> dict[int, str]:
    """Run several debates concurrently on one event loop (LLM calls are I/O-bound), sharing one
    client per agent spec so each provider's concurrency limit bounds the open connections."""
    return event_loop.run(_run_all(debate_ids))


@dataclass(frozen=True)
class _Commits:
    turns: GroupCommit
    finishes: GroupCommit
    texts: live.InFlightTexts  # turns under way, for pages opened mid-turn


def _prepared(debates: list[Debate]) -> list[tuple[Debate, DebateSetup, list[Turn]]]:
    """Each claimed debate with its setup and the turns a crashed worker left (for a resume)."""
    prefetch_related_objects(debates, "turns")
    return [(debate, build_setup(debate), stored_turns(debate)) for debate in debates]


async def _run_all(debate_ids: list[int]) -> dict[int, str]:
    clients: dict[str, ChatClient] = {}

    def client_for(spec) -> object:
        key = str(spec)
        if key not in clients:
            clients[key] = chat_client(spec)
        return clients[key]

    async with DatabaseThread() as db, outbox(), live.InFlightTexts.saving() as texts:
        # The batch starts in a few queries, however many debates it holds; turns (and debates)
        # that finish together are stored in one transaction. A pause or cancel of the job stops
        # every debate at its next call (evalhub.llm.interrupt), not at its next round.
        prepared = await db.run(lambda: _prepared(do_claim_debates(debate_ids)))
        commits = _Commits(
            turns=GroupCommit(db, do_record_turns), finishes=GroupCommit(db, do_finish_debates), texts=texts
        )
        try:
            ran: list[object] = list(
                await asyncio.gather(*(_run_one(*entry, client_for, db, commits) for entry in prepared))
            )
        finally:  # their connections belong to this loop, which ends with the batch
            await asyncio.gather(*(client.aclose() for client in clients.values()))
        stops = [reason for reason in ran if isinstance(reason, Interrupted)]
        if stops:  # the chunk is not done: its stopped debates wait, pending, for a resume
            raise stops[0]
        statuses = {debate.pk: str(status) for (debate, _, _), status in zip(prepared, ran, strict=True)}
        if len(statuses) < len(debate_ids):  # not claimed: finished, paused or cancelled before it began
            statuses.update(
                await db.run(lambda: dict(Debate.objects.filter(pk__in=debate_ids).values_list("id", "status")))
            )
    return {debate_id: statuses.get(debate_id, "deleted") for debate_id in debate_ids}


async def _run_one(
    debate: Debate, setup: DebateSetup, done: list[Turn], client_for, db: DatabaseThread, commits: _Commits
) -> str | Interrupted:
    debate_id, run = debate.pk, debate.run
    agents = [client_for(spec) for spec in run.agents]
    group = debate.group_name

    async def ask(agent: int, round_number: int, messages: list[dict[str, str]]):
        # A re-ask starts its text afresh: the same frame as a first ask.
        key = live.in_flight_key(debate_id, round_number, agent)
        commits.texts.note(key, "")
        await send_html(group, live.turn_in_flight(round_number, agent))
        stream = agents[agent].stream(
            messages,
            temperature=run.temperature,
            max_tokens=run.max_tokens,
            seed=turn_seed(run, debate_id, agent, round_number),
        )
        # Frames go out in small batches (about every 40 ms), each with the whole text so far, so a
        # viewer who arrives mid-turn is complete at the next one; the cache keeps the text for pages
        # rendered meanwhile (the batch saves every turn's together: it is read only when a page opens).
        text, flushed_at = "", time.monotonic()
        unsent = False
        async for chunk in stream:
            text += chunk
            unsent = True
            commits.texts.note(key, text)
            now = time.monotonic()
            if now - flushed_at >= FLUSH_INTERVAL_S:
                await send_html(group, live.turn_in_flight(round_number, agent, text))
                flushed_at, unsent = now, False
        if unsent:
            await send_html(group, live.turn_in_flight(round_number, agent, text))
        done_call = stream.completion
        return done_call.text, done_call.stats()

    async def on_turn(turn: Turn) -> None:
        commits.texts.drop(live.in_flight_key(debate_id, turn.round, turn.agent))
        await commits.turns.add((debate_id, turn, str(run.agents[turn.agent])))

    try:
        outcome = await run_protocol(setup, ask, done=done, on_turn=on_turn)
    except Interrupted as stop:
        await db.run(do_release_debate, debate)
        return stop  # collected by _run_all, which raises it once
    except LLMError as error:
        logger.warning("debate %s failed: %s", debate_id, error)
        cause = str(error)
        return (await db.run(lambda: do_release_debate(debate, error=cause))).status
    return (await commits.finishes.add((debate, outcome))).status


# --- the job kind: a chunk of debates ---------------------------------------------------------


class DebateRunner(JobRunner[DebateRun, dict[int, str]]):
    """Debate runs: a chunk is a set of debates run concurrently. Turns and outcomes are stored as
    they happen (and usage with them); recording the chunk counts its failed debates (a resume runs
    them again) and settles the job when it is the last."""

    kind = DEBATE
    run_attr = "debate_run"
    results = "debate_run_results"
    config = DebateConfig
    rejected = RunRejected
    count_usage = False  # added as each debate settles

    @classmethod
    def make_run(cls, config: DebateConfig, user: Any, **columns: Any) -> DebateRun:
        """The run and one debate per pair of the two models' responses (refused when no prompt has both)."""
        run: DebateRun = super().make_run(config, user, **columns)
        do_create_debates(run, check_pairs(run))
        return run

    @classmethod
    def plan(cls, config: DebateConfig, run: DebateRun, size: int | None) -> Plan:
        ids = list(run.debates.order_by("id").values_list("id", flat=True))
        return Plan(f"Debates: {run.name}", ids, size or DEBATES_PER_TASK)

    @classmethod
    def load(cls, job_id: int) -> DebateRun:
        return DebateRun.objects.get(job_id=job_id)

    @classmethod
    def queue(cls, run: DebateRun) -> str:
        return debate_queue(run)

    @classmethod
    def on_change(cls, run: DebateRun) -> None:
        broadcast_run(run)

    def work(self, chunk: JobChunk) -> dict[int, str]:
        return run_debates(chunk.unit_ids)

    def write(self, chunk: JobChunk, result: dict[int, str]) -> int:
        return sum(status == DebateStatus.FAILED for status in result.values())

    def progress_done(self, job: Job) -> int:
        return run_counts(self.run)["finished"]  # counted as each debate settles

    def progress(self, job: Job) -> str:
        counts = run_counts(self.run)
        return f"{counts['finished']:,} of {counts['total']:,} debates finished ({counts['failed']:,} failed)"

    def finish(self, job: Job) -> Settled:
        counts = run_counts(self.run)
        outcome = debate_outcome(self.run, counts)
        message = (
            f"{counts['consensus']:,} consensus, {counts['unresolved'] + counts['adjudicated']:,} sent to people"
            + (f", {counts['failed']:,} failed." if counts["failed"] else ".")
        )
        return Settled(message, counts, outcome)


def debate_outcome(run: DebateRun, counts: dict[str, int]) -> Outcome:
    """Debates with a result (consensus, or sent to people) against failed ones; an agent that never
    answered while debates failed because of it is named with the first such error."""
    answered = set(DebateTurn.objects.filter(debate__run=run).values_list("agent_spec", flat=True).distinct())
    errors = list(run.debates.filter(status=DebateStatus.FAILED).values_list("error", flat=True)[:200])
    failed_components = []
    for spec in dict.fromkeys(str(agent) for agent in run.agents):
        if spec in answered:
            continue
        first = next((e for e in errors if e.startswith(_provider_model(spec))), None)
        if first:
            failed_components.append(ComponentFailure("Agent", spec, first))
    produced = counts["consensus"] + counts["unresolved"] + counts["adjudicated"]
    return Outcome(
        planned=counts["total"],
        produced=produced,
        failed=counts["failed"],
        failed_components=tuple(failed_components),
        cause=f"Every debate failed: {errors[0]}" if errors else "",
    )


def _provider_model(spec: str) -> str:
    """How an LLMError names a spec's model ("provider:model:"), to match errors to agents."""
    from evalhub.llm.registry import parse_spec

    parsed = parse_spec(spec)
    return f"{parsed.provider}:{parsed.model}:"
