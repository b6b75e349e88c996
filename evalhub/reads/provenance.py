"""Where a board's verdicts came from, as far as a reader must be told: offline stand-ins."""

from __future__ import annotations

from django.db.models import Exists, OuterRef

from evalhub.debates.models import DebateRun, DebateTurn, JudgeRun, JudgeVerdict
from evalhub.llm.stand_ins import stand_ins


def stand_in_specs() -> list[str]:
    """The offline stand-ins (heuristic agents and judges) behind a stored debate turn or single-judge
    verdict; a run that has stored nothing yet is behind no number."""
    spoke = DebateRun.objects.filter(Exists(DebateTurn.objects.filter(debate__run=OuterRef("pk"))))
    judged = JudgeRun.objects.filter(Exists(JudgeVerdict.objects.filter(judge_run=OuterRef("pk"))))
    specs = [spec for agents in spoke.values_list("agents", flat=True) for spec in agents or []]
    specs += list(judged.values_list("judge", flat=True))
    return sorted(set(stand_ins(specs)))
