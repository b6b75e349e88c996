from __future__ import annotations

from django.db import models


class ReportSnapshot(models.Model):
    """The judge lab's report for one scope as last computed, and the data fingerprint it was computed
    from. A request shows the one for the data as it is now, or else the last one (saying so) while a
    worker computes a new one: at a million labels a report takes seconds, and no request waits for it."""

    scope = models.CharField(max_length=400, unique=True, help_text="The report's version and its scope.")
    fingerprint = models.CharField(max_length=40)
    computed_at = models.DateTimeField()
    seconds = models.FloatField(help_text="How long computing it took.")
    payload = models.BinaryField(
        help_text="The report as MessagePack of its own types (evalhub.core.judge_lab.snapshots)."
    )

    def __str__(self) -> str:
        return f"judge lab report {self.scope} at {self.computed_at:%Y-%m-%d %H:%M}"
