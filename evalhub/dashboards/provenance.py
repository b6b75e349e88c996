"""Where a board's verdicts came from, as far as a reader must be told: offline stand-ins."""

from __future__ import annotations

from evalhub.debates.models import DebateRun, JudgeRun
from evalhub.llm.stand_ins import stand_ins


def stand_in_specs() -> list[str]:
    """The offline stand-ins (heuristic agents and judges) behind any debate or single-judge verdict."""
    specs = [spec for agents in DebateRun.objects.values_list("agents", flat=True) for spec in agents or []]
    specs += list(JudgeRun.objects.values_list("judge", flat=True))
    return sorted(set(stand_ins(specs)))
