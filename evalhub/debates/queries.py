"""Reads of the debates app's tables that other apps need, in one place."""

from __future__ import annotations

from collections.abc import Iterator

from django.db import connection

from evalhub.debates.models import JudgeVerdict


def judge_verdict_rows() -> Iterator[tuple[int, int, bool, int | None]]:
    """Every single judge's verdict as (judge run, debate, shown in reversed order, verdict), by run,
    debate, order and sample: a pair's answers in the debate's order come before those in the reverse,
    the order a run asks them (`judging.judge_chunk_work`), so "the order first shown" is that one and
    never whichever answer a worker happened to store first. Raw rows: there are tens of thousands, and
    the ORM's per-row conversion was most of the boards' and the judge lab's time."""
    table = JudgeVerdict._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT judge_run_id, debate_id, reversed_order, verdict FROM {table} "  # noqa: S608
            "ORDER BY judge_run_id, debate_id, reversed_order, sample"  # the unique index's order
        )
        while rows := cursor.fetchmany(20000):
            for run, debate, reversed_order, verdict in rows:
                yield run, debate, bool(reversed_order), verdict


def share_of_first(probabilities: dict[str, float]) -> float:
    """A judge's stored verdict probabilities (`JudgeVerdict.probabilities`) as its share for the response
    shown first, a tie counting half."""
    return float(probabilities["first"]) + 0.5 * float(probabilities["tie"])


def judge_verdict_shares() -> dict[tuple[int, int, bool], list[float]]:
    """(judge run, debate, shown reversed) → the judge's own probability for the response shown first
    (a tie half), one per answer that gave probabilities (runs with `probabilities`)."""
    rows = JudgeVerdict.objects.filter(probabilities__isnull=False, judge_run__probabilities=True).values_list(
        "judge_run_id", "debate_id", "reversed_order", "probabilities"
    )
    out: dict[tuple[int, int, bool], list[float]] = {}
    for run, debate, reversed_order, given in rows.iterator(chunk_size=5000):
        if isinstance(given, dict):
            out.setdefault((run, debate, bool(reversed_order)), []).append(share_of_first(given))
    return out
