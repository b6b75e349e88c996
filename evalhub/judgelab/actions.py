"""The judge lab's writes: its report snapshots (see evalhub.judgelab.report)."""

from __future__ import annotations

from datetime import datetime

from evalhub.core.judge_lab.report_types import Report
from evalhub.core.judge_lab.snapshots import Boards, encode_boards, encode_report
from evalhub.judgelab.models import ReportSnapshot


def do_store_report_snapshot(
    scope_key: str, fingerprint: str, report: Report, computed_at: datetime, seconds: float
) -> None:
    """Keep `report` as the scope's last one (MessagePack of its own types: reading it runs no code)."""
    _keep(scope_key, fingerprint, encode_report(report), computed_at, seconds)


def do_store_boards_snapshot(
    boards_key: str, fingerprint: str, boards: Boards, computed_at: datetime, seconds: float
) -> None:
    """Keep a scope's corrected boards by one estimator, apart from its report."""
    _keep(boards_key, fingerprint, encode_boards(boards), computed_at, seconds)


def _keep(key: str, fingerprint: str, payload: bytes, computed_at: datetime, seconds: float) -> None:
    ReportSnapshot.objects.update_or_create(
        scope=key,
        defaults={"fingerprint": fingerprint, "computed_at": computed_at, "seconds": seconds, "payload": payload},
    )
