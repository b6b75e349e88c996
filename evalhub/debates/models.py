"""Debate runs, their debates (one per pair of responses) and every agent's turn."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.urls import reverse

from evalhub.core.debate import ALL_ROUNDS, LAST_ROUND, MAJORITY, UNANIMOUS


class RunStatus(models.TextChoices):
    DRAFT = "draft", "Draft"
    RUNNING = "running", "Running"
    PAUSED = "paused", "Paused"
    CANCELLED = "cancelled", "Cancelled"


class DebateRun(models.Model):
    name = models.CharField(max_length=200)
    benchmark = models.ForeignKey("catalog.Benchmark", on_delete=models.PROTECT, related_name="debate_runs")
    criterion = models.ForeignKey("catalog.Criterion", on_delete=models.PROTECT, related_name="debate_runs")
    model_a = models.ForeignKey("catalog.LanguageModel", on_delete=models.PROTECT, related_name="+")
    model_b = models.ForeignKey("catalog.LanguageModel", on_delete=models.PROTECT, related_name="+")
    category = models.CharField(max_length=100, blank=True, help_text="Only prompts of this category (blank: all).")
    agents = models.JSONField(help_text="Provider specs, one per agent.")
    rounds = models.PositiveSmallIntegerField(default=3)
    consensus_rule = models.CharField(
        max_length=20, choices=[(UNANIMOUS, "Unanimous"), (MAJORITY, "Majority")], default=UNANIMOUS
    )
    history = models.CharField(
        max_length=10,
        choices=[(ALL_ROUNDS, "All previous rounds"), (LAST_ROUND, "Only the last round")],
        default=ALL_ROUNDS,
    )
    privileged_sources = models.JSONField(default=list, blank=True, help_text="Privileged fields shown to agents.")
    temperature = models.FloatField(default=0.0)
    max_tokens = models.PositiveIntegerField(default=512)
    seed = models.IntegerField(default=0)
    status = models.CharField(max_length=20, choices=RunStatus.choices, default=RunStatus.DRAFT)
    usage = models.JSONField(default=dict, blank=True, help_text="Tokens and cost, summed over turns.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        return reverse("debate_run_detail", args=[self.pk])


class DebateStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    CONSENSUS = "consensus", "Consensus"
    UNRESOLVED = "unresolved", "Sent to adjudication"
    ADJUDICATED = "adjudicated", "Adjudicated"
    FAILED = "failed", "Failed"


FINISHED_DEBATE = (DebateStatus.CONSENSUS, DebateStatus.UNRESOLVED, DebateStatus.ADJUDICATED)


class Winner(models.TextChoices):
    A = "a", "Model A"
    B = "b", "Model B"
    TIE = "tie", "Neither"


class Debate(models.Model):
    """One pair under one run. `swapped` records the order shown: if set, submission 1 was B's response."""

    run = models.ForeignKey(DebateRun, on_delete=models.CASCADE, related_name="debates")
    prompt = models.ForeignKey("catalog.Prompt", on_delete=models.CASCADE, related_name="debates")
    response_a = models.ForeignKey("catalog.Response", on_delete=models.CASCADE, related_name="+")
    response_b = models.ForeignKey("catalog.Response", on_delete=models.CASCADE, related_name="+")
    swapped = models.BooleanField()
    status = models.CharField(max_length=20, choices=DebateStatus.choices, default=DebateStatus.PENDING)
    verdict = models.SmallIntegerField(null=True, blank=True, help_text="In the order shown: 1, 2 or 0.")
    winner = models.CharField(max_length=3, choices=Winner.choices, blank=True)
    rounds_used = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(fields=["run", "prompt", "response_a", "response_b"], name="one_debate_per_pair")
        ]

    def __str__(self) -> str:
        return f"Debate {self.pk} on {self.prompt_id}"

    def get_absolute_url(self) -> str:
        return reverse("debate_detail", args=[self.pk])

    @property
    def group_name(self) -> str:
        return f"debate.{self.pk}"

    @property
    def round_range(self) -> range:
        return range(self.run.rounds)

    @property
    def shown(self) -> tuple:
        """(submission 1, submission 2) as the agents saw them."""
        return (self.response_b, self.response_a) if self.swapped else (self.response_a, self.response_b)

    def winner_of(self, verdict: int) -> str:
        if verdict == 0:
            return Winner.TIE
        first_is_a = not self.swapped
        return Winner.A if (verdict == 1) == first_is_a else Winner.B


class DebateTurn(models.Model):
    debate = models.ForeignKey(Debate, on_delete=models.CASCADE, related_name="turns")
    round = models.PositiveSmallIntegerField()
    agent = models.PositiveSmallIntegerField(help_text="0-based; shown as Speaker agent+1.")
    agent_spec = models.CharField(max_length=300)
    text = models.TextField()
    verdict = models.SmallIntegerField(null=True, blank=True)
    reasked = models.BooleanField(default=False)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    latency_s = models.FloatField(default=0)
    cached = models.BooleanField(default=False)
    cost_usd = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["round", "agent"]
        constraints = [
            models.UniqueConstraint(fields=["debate", "round", "agent"], name="one_turn_per_agent_and_round")
        ]

    def __str__(self) -> str:
        return f"Debate {self.debate_id} round {self.round} speaker {self.agent + 1}"

    @property
    def valid(self) -> bool:
        return self.verdict is not None

    @property
    def speaker(self) -> int:
        return self.agent + 1
