"""Single judges' verdicts reduced to one majority per (judge run, debate), once per data
fingerprint: both the pairwise board (single-judge battles) and the judges board read them."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from evalhub.core.statistics.agreement import majorities
from evalhub.debates.models import JudgeRun, single_judge_name
from evalhub.debates.queries import judge_verdict_rows
from evalhub.reads.caching import cached

Majorities = dict[int, int | None]  # debate → verdict in the debate's order (None: no majority)


def judge_run_majorities(stamp: str) -> dict[int, dict[str, Any]]:
    """judge run → its settings, and its majorities in the debate's order and in the reversed order
    (mapped back to the debate's order)."""
    return cached("judge_run_majorities", _compute, stamp=stamp)


def _compute() -> dict[int, dict[str, Any]]:
    grouped: dict[int, list[tuple[int, bool, int | None]]] = defaultdict(list)
    for run_id, debate, reversed_order, verdict in judge_verdict_rows():
        grouped[run_id].append((debate, reversed_order, verdict))
    out = {}
    for run in JudgeRun.objects.values(
        "id", "judge", "criteria_variant", "privileged_sources", "reference_id", "check_position", "rubric"
    ):
        same, reversed_, _ = majorities(grouped.get(run["id"], ()))
        # "judge": the name boards give it (its spec, and its YESciEval rubric where it had one).
        out[run["id"]] = {
            **run,
            "judge": single_judge_name(run["judge"], run["rubric"]),
            "same": same,
            "reversed": reversed_,
        }
    return out
