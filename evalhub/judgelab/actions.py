"""The judge lab's writes: its report snapshots (see evalhub.judgelab.report)."""

from __future__ import annotations

from datetime import datetime

from evalhub.core.judge_lab.report_types import Report
from evalhub.core.judge_lab.snapshots import encode_report
from evalhub.judgelab.models import ReportSnapshot


def do_store_report_snapshot(
    scope_key: str, fingerprint: str, report: Report, computed_at: datetime, seconds: float
) -> None:
    """Keep `report` as the scope's last one (MessagePack of its own types: reading it runs no code)."""
    ReportSnapshot.objects.update_or_create(
        scope=scope_key,
        defaults={
            "fingerprint": fingerprint,
            "computed_at": computed_at,
            "seconds": seconds,
            "payload": encode_report(report),
        },
    )
