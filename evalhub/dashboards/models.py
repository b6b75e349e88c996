"""What the boards keep besides counts: people's labels asked for until an interval is narrow enough."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class LabelRequest(models.Model):
    """ "Ask people until ± target points": batches of a model's judged pairs go to people's queue, one
    labelling run each; when a batch is all labelled, the model's anytime-valid corrected interval
    decides whether to stop (target reached, budget spent, no pair left) or send the next batch."""

    class Outcome(models.TextChoices):
        ASKING = "asking", "asking"
        REACHED = "reached", "target reached"
        SPENT = "spent", "budget spent"
        EXHAUSTED = "exhausted", "no unlabelled pair left"

    benchmark = models.CharField(max_length=100)
    judge = models.CharField(max_length=100)
    baseline = models.CharField(max_length=100)
    criterion = models.CharField(max_length=100)
    model = models.CharField(max_length=100)
    target = models.FloatField(help_text="The half-width to reach, in percentage points.")
    budget = models.PositiveIntegerField(help_text="The most pairs to send to people in all.")
    batch = models.PositiveIntegerField(help_text="Pairs sent at a time.")
    seed = models.BigIntegerField()
    sent = models.PositiveIntegerField(default=0)
    last_run = models.ForeignKey("debates.DebateRun", null=True, on_delete=models.SET_NULL, related_name="+")
    outcome = models.CharField(max_length=12, choices=Outcome.choices, default=Outcome.ASKING)
    reason = models.CharField(max_length=300, blank=True)
    half_width = models.FloatField(null=True, blank=True, help_text="The interval's half-width at the last look.")
    looks = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["benchmark", "judge", "baseline", "criterion"])]

    def __str__(self) -> str:
        return f"{self.model} vs {self.baseline}: ± {self.target} ({self.get_outcome_display()})"
