"""Judge versions: each change to a judge (its spec, prompt, criteria variant, privileged sources,
examples) is a new version naming its parent, kept whole so any two can be compared."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from evalhub.core.alignment.versions import JudgeDefinition


class Method(models.TextChoices):
    BY_HAND = "by_hand", "by hand"
    FEW_SHOT = "few_shot", "few-shot from disagreements"
    REWRITE = "rewrite", "instructions rewritten"
    SETTINGS = "settings", "settings chosen on train labels"


class JudgeVersion(models.Model):
    name = models.SlugField(max_length=100, help_text="The judge's name; its versions share it.")
    number = models.PositiveIntegerField()
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.PROTECT, related_name="children")
    definition = models.JSONField(help_text="evalhub.core.alignment.versions.JudgeDefinition, stored once.")
    method = models.CharField(max_length=20, choices=Method.choices, default=Method.BY_HAND)
    # The split whose train labels made this version (an improved judge); held-out labels score it.
    split = models.ForeignKey("catalog.LabelSplit", null=True, blank=True, on_delete=models.PROTECT)
    note = models.TextField(blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "number"]
        constraints = [
            models.UniqueConstraint(fields=["name", "number"], name="one_judge_version_per_number"),
            models.CheckConstraint(condition=Q(number__gte=1), name="judge_version_numbers_from_1"),
        ]

    def __str__(self) -> str:
        return f"{self.name} v{self.number}"

    @property
    def judge(self) -> JudgeDefinition:
        return JudgeDefinition.from_json(self.definition)

    @property
    def aligned(self) -> bool:
        """Made from people's train labels: its train figures are optimistic, its held-out ones are not."""
        return self.method != Method.BY_HAND


class VersionRun(models.Model):
    """A judge version run on a debate run's pairs: the debates app's JudgeRun made from its definition,
    named "NAME vN" in the judge lab."""

    version = models.ForeignKey(JudgeVersion, on_delete=models.CASCADE, related_name="runs")
    judge_run = models.OneToOneField("debates.JudgeRun", on_delete=models.CASCADE, related_name="version_run")

    def __str__(self) -> str:
        return f"{self.version} on {self.judge_run.reference}"
