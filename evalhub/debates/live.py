"""Every live fragment of the debates app, by name, in one place (like Baserow's realtime
message types): the runner and the actions hand these functions data, and only this module
turns data into the HTML that sockets carry.

Groups: `debate.<id>` (a debate's page), `run.<id>` (a run's page) and `debate-runs` (the list).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator

from django.core.cache import cache
from django.template.loader import render_to_string
from django.utils.html import conditional_escape

RUNS_GROUP = "debate-runs"


def debate_group(debate_id: int) -> str:
    return f"debate.{debate_id}"


def run_group(run_id: int) -> str:
    return f"run.{run_id}"


def slot_id(round_number: int, agent: int) -> str:
    """Where a turn lives on the page, whether it is under way, stored, or not begun: every
    (round, agent) has one from the first render, so any frame finds its target."""
    return f"turn-slot-{round_number}-{agent}"


_TEXT = "\x00text\x00"  # where the streamed text goes in a cached frame


@functools.lru_cache(maxsize=256)
def _in_flight_parts(round_number: int, agent: int) -> tuple[str, str]:
    """A turn-under-way frame around its text, rendered once per (round, agent)."""
    slot = {"id": slot_id(round_number, agent), "in_flight": _TEXT, "round": round_number, "agent": agent}
    frame = render_to_string("debates/_slot.html", {"slot": {**slot, "speaker": agent + 1}, "oob": True})
    before, after = frame.split(_TEXT)
    return before, after


def turn_in_flight(round_number: int, agent: int, text: str = "") -> str:
    """A turn under way, whole: the "thinking…" card with every word streamed so far (escaped: model
    output is never markup). Each frame replaces the turn's slot, so a page opened mid-turn is complete
    at the next frame, and no frame can arrive before the element it fills."""
    before, after = _in_flight_parts(round_number, agent)
    return before + conditional_escape(text) + after


def turn(stored_turn) -> str:
    """A stored turn replaces its slot (and the card that streamed it)."""
    slot = {"id": slot_id(stored_turn.round, stored_turn.agent), "turn": stored_turn}
    return render_to_string("debates/_slot.html", {"slot": slot, "oob": True})


# --- turns under way, for pages opened mid-turn ------------------------------------------------

IN_FLIGHT_TIMEOUT_S = 3600  # a worker killed mid-turn leaves its card for at most this long


def in_flight_key(debate_id: int, round_number: int, agent: int) -> str:
    return f"debate-turn-in-flight:{debate_id}:{round_number}:{agent}"


def in_flight(debate_id: int, rounds: int, agents: int) -> dict[tuple[int, int], str]:
    """The debate's turns under way now, (round, agent) → text so far (stored every second while they
    stream; in the cache every web and worker process shares)."""
    keys = {in_flight_key(debate_id, r, a): (r, a) for r in range(rounds) for a in range(agents)}
    return {keys[key]: text for key, text in cache.get_many(list(keys)).items()}


class InFlightTexts:
    """The texts of a batch's turns under way, noted as they stream and written to the shared cache
    together every SAVE_EVERY_S (one round trip for all the batch's turns, where one per turn and
    second was a thread hop per call: a tenth of a debate worker's CPU)."""

    SAVE_EVERY_S = 0.25  # a page opened mid-turn shows the turn under way within this

    def __init__(self) -> None:
        self._pending: dict[str, str] = {}

    def note(self, key: str, text: str) -> None:
        self._pending[key] = text

    def drop(self, key: str) -> None:
        """The turn is stored: its text in flight is no longer to be saved."""
        self._pending.pop(key, None)

    async def save(self) -> None:
        if self._pending:
            texts, self._pending = self._pending, {}
            await asyncio.to_thread(cache.set_many, texts, IN_FLIGHT_TIMEOUT_S)

    @classmethod
    @contextlib.asynccontextmanager
    async def saving(cls) -> AsyncIterator[InFlightTexts]:
        texts = cls()

        async def every_interval() -> None:
            while True:
                await asyncio.sleep(cls.SAVE_EVERY_S)
                await texts.save()

        task = asyncio.ensure_future(every_interval())
        try:
            yield texts
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def forget_in_flight(debate_id: int, rounds: int, agents: int) -> None:
    cache.delete_many([in_flight_key(debate_id, r, a) for r in range(rounds) for a in range(agents)])


def transcript(debate) -> list[dict]:
    """Per round, one slot per agent: its stored turn, else its turn under way (with the text so far),
    else nothing yet. The cache is read only while some turn is not stored."""
    agents = len(debate.run.agents)
    turns = {(t.round, t.agent): t for t in debate.turns.all()}
    flying = in_flight(debate.pk, debate.run.rounds, agents) if len(turns) < debate.run.rounds * agents else {}
    return [
        {
            "round": r,
            "slots": [
                {
                    "id": slot_id(r, a),
                    "turn": turns.get((r, a)),
                    "in_flight": flying.get((r, a)),
                    "round": r,
                    "agent": a,
                    "speaker": a + 1,
                }
                for a in range(agents)
            ],
        }
        for r in range(debate.run.rounds)
    ]


def outcome(debate) -> str:
    return render_to_string("debates/_outcome.html", {"debate": debate, "oob": True})


def run_row(debate) -> str:
    """The debate's row on its run's page, bare: htmx parses a fragment inside a template element,
    where a table row stands on its own (wrapped in one, the wrapper became the swap's target)."""
    return render_to_string("debates/_run_row.html", {"debate": debate, "run": debate.run, "oob": True})


def run_summary(run, counts: dict[str, int]) -> str:
    return render_to_string("debates/_run_summary.html", {"run": run, "counts": counts, "oob": True})
