"""The judge lab's writes: its report snapshots (see evalhub.judgelab.report)."""

from __future__ import annotations

import pickle
from datetime import datetime

from django.utils.crypto import salted_hmac

from evalhub.core.judge_lab.report_types import Report
from evalhub.judgelab.models import ReportSnapshot

SIGNING_SALT = "evalhub.judgelab.report-snapshot"


def sign(payload: bytes) -> str:
    return salted_hmac(SIGNING_SALT, payload, algorithm="sha256").hexdigest()


def do_store_report_snapshot(
    scope_key: str, fingerprint: str, report: Report, computed_at: datetime, seconds: float
) -> None:
    """Keep `report` as the scope's last one. Signed, so only what this server wrote is ever unpickled."""
    payload = pickle.dumps(report, protocol=pickle.HIGHEST_PROTOCOL)
    ReportSnapshot.objects.update_or_create(
        scope=scope_key,
        defaults={
            "fingerprint": fingerprint,
            "computed_at": computed_at,
            "seconds": seconds,
            "payload": payload,
            "signature": sign(payload),
        },
    )
