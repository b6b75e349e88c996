"""The human queue: debates the agents could not settle."""

from __future__ import annotations

from django.db import models


class ItemStatus(models.TextChoices):
    OPEN = "open", "Waiting for people"
    RESOLVED = "resolved", "Resolved"


class AdjudicationItem(models.Model):
    debate = models.OneToOneField("debates.Debate", on_delete=models.CASCADE, related_name="adjudication_item")
    status = models.CharField(max_length=20, choices=ItemStatus.choices, default=ItemStatus.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"Adjudication of debate {self.debate_id} ({self.get_status_display()})"
