"""What long work leaves beside its results, shared by every app that runs it (scoring's GEM and
DHP runs, generation runs): the rows a job could not score and why, and the LLM rewrites of texts
stored once for every worker. Below the apps that write them, so none writes another's tables."""

from __future__ import annotations

from django.db import models

from evalhub.catalog.models import Prompt, Response
from evalhub.jobs.models import Job


class RowIssue(models.Model):
    """Why a row of a job was not scored, or was scored with a caveat: shown on the job page, never hidden."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="row_issues")
    prompt = models.ForeignKey(Prompt, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    response = models.ForeignKey(Response, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    label = models.CharField(max_length=100, blank=True, help_text="The variant, metric or judge it concerns.")
    stage = models.CharField(max_length=30)  # input, preprocess, perturbation, validation, scoring, judging
    message = models.CharField(max_length=1000)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "scoring_rowissue"  # the table it had in the scoring app, kept as it was
        ordering = ["id"]

    def __str__(self) -> str:
        return f"{self.stage}: {self.message}"


class IssueLog(list):
    """RowIssue rows collected while a chunk works, written with its results."""

    def __init__(self, job: Job) -> None:
        super().__init__()
        self.job = job

    def __call__(self, stage: str, message: str, *, prompt=None, response=None, label: str = "") -> None:
        self.append(
            RowIssue(job=self.job, prompt=prompt, response=response, label=label, stage=stage, message=message[:1000])
        )


class DerivedText(models.Model):
    """An LLM's rewrite of a text (C.1 preprocessing, C.4 summary, D.3/D.4 strategies), kept so
    every worker on every machine reuses it and the page can show what was scored."""

    purpose = models.CharField(max_length=40)
    provider = models.CharField(max_length=500)
    prompt_version = models.CharField(max_length=100)
    source_sha256 = models.CharField(max_length=64)
    text = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "scoring_derivedtext"  # the table it had in the scoring app, kept as it was
        constraints = [
            models.UniqueConstraint(
                fields=["purpose", "provider", "prompt_version", "source_sha256"], name="one_derived_text_per_source"
            )
        ]

    def __str__(self) -> str:
        return f"{self.purpose} by {self.provider}"
