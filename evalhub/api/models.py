"""Uploads imported in the background: a large file sent through the API is stored in the database (the
one store every worker on every machine reads), in parts, and imported by a worker as a job a pipeline
follows (evalhub.api.uploads)."""

from __future__ import annotations

from django.conf import settings
from django.db import models


class Upload(models.Model):
    """A file uploaded through the API to import in the background: what the import form was given, the
    file (its parts), and once a worker imported it, the outcome the request would have answered."""

    job = models.OneToOneField("jobs.Job", on_delete=models.CASCADE, related_name="upload")
    what = models.CharField(max_length=20, help_text="The import: benchmark, judgments or scores.")
    fields = models.JSONField(default=dict, blank=True, help_text="The import form's other fields.")
    filename = models.CharField(max_length=300)
    size = models.BigIntegerField(help_text="Bytes.")
    sha256 = models.CharField(max_length=64, blank=True, help_text="Of the stored parts, checked as they are read.")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)
    # {"imported": {...}} or {"rejected": {...}}, as the request answers an import done at once; {} until then.
    outcome = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.filename} ({self.what})"


class UploadPart(models.Model):
    """A slice of an upload's bytes; deleted once the file is imported or refused (its rows, or its
    reasons, are what is kept)."""

    upload = models.ForeignKey(Upload, on_delete=models.CASCADE, related_name="parts")
    index = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        ordering = ["upload", "index"]
        constraints = [models.UniqueConstraint(fields=["upload", "index"], name="upload_part_once")]

    def __str__(self) -> str:
        return f"part {self.index} of upload {self.upload_id}"
