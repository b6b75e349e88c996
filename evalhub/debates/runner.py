"""Running one debate: the pure engine (evalhub.core.debate) wired to model clients, the
database and the browsers watching.

Each finished turn is stored before the next round starts, so a worker that dies mid-debate
loses at most the turns in flight; running the debate again resumes from what is stored.
Agents stream: their text reaches watching browsers chunk by chunk as it is produced.
"""

from __future__ import annotations

import asyncio
import logging
import zlib

from asgiref.sync import sync_to_async
from django.template.loader import render_to_string
from django.utils.html import escape

from evalhub.core.debate import DebateSetup, Turn, criteria_text
from evalhub.core.debate import run_debate as run_protocol
from evalhub.debates.actions import do_finish_debate, do_mark_running, do_record_turn, do_release_debate
from evalhub.debates.models import Debate, DebateRun, RunStatus
from evalhub.live import send_html
from evalhub.llm.types import LLMError
from evalhub.system.model_access import chat_client

logger = logging.getLogger(__name__)
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
            {
                "input_tokens": t.input_tokens,
                "output_tokens": t.output_tokens,
                "latency_s": t.latency_s,
                "cached": t.cached,
                "cost_usd": t.cost_usd,
            },
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
    debate = Debate.objects.select_related("run__criterion", "prompt", "response_a", "response_b").get(pk=debate_id)
    if not do_mark_running(debate):
        return Debate.objects.get(pk=debate_id).status
    run = debate.run
    setup = build_setup(debate)
    clients = [chat_client(spec) for spec in run.agents]
    group = debate.group_name

    async def ask(agent: int, round_number: int, messages: list[dict[str, str]]):
        target = f"turn-{round_number}-{agent}-text"
        await send_html(
            group,
            render_to_string(
                "debates/_turn_started.html", {"round": round_number, "agent": agent, "speaker": agent + 1}
            ),
        )
        stream = clients[agent].stream(
            messages,
            temperature=run.temperature,
            max_tokens=run.max_tokens,
            seed=turn_seed(run, debate_id, agent, round_number),
        )
        async for chunk in stream:
            await send_html(group, f'<div hx-swap-oob="beforeend:#{target}">{escape(chunk)}</div>')
        done = stream.completion
        extra = {
            "input_tokens": done.input_tokens,
            "output_tokens": done.output_tokens,
            "latency_s": round(done.latency_s, 3),
            "cached": done.cached,
            "cost_usd": done.cost_usd,
        }
        return done.text, extra

    async def on_turn(turn: Turn) -> None:
        await sync_to_async(do_record_turn)(debate_id, turn, str(run.agents[turn.agent]))

    async def should_stop() -> bool:
        status = await sync_to_async(lambda: DebateRun.objects.values_list("status", flat=True).get(pk=run.pk))()
        return status != RunStatus.RUNNING

    try:
        outcome = asyncio.run(
            run_protocol(setup, ask, done=stored_turns(debate), on_turn=on_turn, should_stop=should_stop)
        )
    except LLMError as error:
        logger.warning("debate %s failed: %s", debate_id, error)
        return do_release_debate(debate, error=str(error)).status
    if outcome.stopped:
        return do_release_debate(debate).status
    return do_finish_debate(debate, outcome).status
