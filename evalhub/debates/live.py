"""Every live fragment of the debates app, by name, in one place (like Baserow's realtime
message types): the runner and the actions hand these functions data, and only this module
turns data into the HTML that sockets carry.

Groups: `debate.<id>` (a debate's page), `run.<id>` (a run's page) and `debate-runs` (the list).
"""

from __future__ import annotations

import functools

from django.template.loader import render_to_string
from django.utils.html import format_html

RUNS_GROUP = "debate-runs"


def debate_group(debate_id: int) -> str:
    return f"debate.{debate_id}"


def run_group(run_id: int) -> str:
    return f"run.{run_id}"


def text_target(round_number: int, agent: int) -> str:
    return f"turn-{round_number}-{agent}-text"


@functools.lru_cache(maxsize=256)
def turn_started(round_number: int, agent: int) -> str:
    """The "thinking…" card of a turn; the same few for every debate, so rendered once each."""
    context = {"round": round_number, "agent": agent, "speaker": agent + 1}
    return render_to_string("debates/_turn_started.html", context)


def turn_text_reset(round_number: int, agent: int) -> str:
    """A re-asked turn starts its text afresh."""
    return format_html('<div id="{}" class="text" hx-swap-oob="true"></div>', text_target(round_number, agent))


def turn_text(round_number: int, agent: int, text: str) -> str:
    """Streamed words, appended to the turn's text (escaped: model output is never markup)."""
    return format_html('<div hx-swap-oob="beforeend:#{}">{}</div>', text_target(round_number, agent), text)


def turn(stored_turn) -> str:
    return render_to_string("debates/_turn.html", {"turn": stored_turn, "oob": True})


def outcome(debate) -> str:
    return render_to_string("debates/_outcome.html", {"debate": debate, "oob": True})


def run_row(debate) -> str:
    """The debate's row on its run's page (a table row travels inside a template element)."""
    return "<template>" + render_to_string("debates/_run_row.html", {"debate": debate, "oob": True}) + "</template>"


def run_summary(run, counts: dict[str, int]) -> str:
    return render_to_string("debates/_run_summary.html", {"run": run, "counts": counts, "oob": True})
