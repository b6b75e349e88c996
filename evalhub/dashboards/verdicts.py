"""Single judges' verdicts reduced to one majority per (judge run, debate), once per data
fingerprint: both the pairwise board (single-judge battles) and the judges board read them."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from django.db import connection

from evalhub.core.statistics.agreement import majorities
from evalhub.dashboards.caching import cached
from evalhub.debates.models import JudgeRun, JudgeVerdict

Majorities = dict[int, int | None]  # debate → verdict in the debate's order (None: no majority)


def judge_run_majorities(stamp: str) -> dict[int, dict[str, Any]]:
    """judge run → its settings, and its majorities in the debate's order and in the reversed order
    (mapped back to the debate's order)."""
    return cached("judge_run_majorities", _compute, stamp=stamp)


def _compute() -> dict[int, dict[str, Any]]:
    grouped: dict[int, list[tuple[int, bool, int | None]]] = defaultdict(list)
    # Raw rows: tens of thousands of verdicts, and the ORM's per-row conversion was most of the time.
    table = JudgeVerdict._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT judge_run_id, debate_id, reversed_order, verdict FROM {table}")  # noqa: S608
        while rows := cursor.fetchmany(20000):
            for run, debate, reversed_order, verdict in rows:
                grouped[run].append((debate, bool(reversed_order), verdict))
    out = {}
    for run in JudgeRun.objects.values(
        "id", "judge", "criteria_variant", "privileged_sources", "reference_id", "check_position"
    ):
        same, reversed_, _ = majorities(grouped.get(run["id"], ()))
        out[run["id"]] = {**run, "same": same, "reversed": reversed_}
    return out
