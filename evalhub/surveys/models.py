"""Expert-weight surveys (DHP, Appendix E): versions, invitations and answers."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from evalhub.system.slugs import slug_constraint


class Survey(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    title = models.CharField(max_length=200)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["title"]
        constraints = [slug_constraint("survey")]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("survey_manage", args=[self.slug])

    @property
    def latest(self) -> SurveyVersion | None:
        return self.versions.order_by("-number").first()


class SurveyVersion(models.Model):
    """What experts answer. Once published it never changes: an edit makes the next version."""

    survey = models.ForeignKey(Survey, on_delete=models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    instructions = models.TextField()
    metrics = models.JSONField(help_text='[{"key", "name", "definition"}, …]')
    issues = models.JSONField(help_text='[{"key": perturbation, "description": plain text}, …]')
    published = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["survey_id", "number"]
        constraints = [models.UniqueConstraint(fields=["survey", "number"], name="one_number_per_survey_version")]

    def __str__(self) -> str:
        return f"{self.survey.title} v{self.number}"

    def metric_keys(self) -> list[str]:
        return [m["key"] for m in self.metrics]

    def issue_keys(self) -> list[str]:
        return [i["key"] for i in self.issues]


class Invitation(models.Model):
    """One expert's link to one survey version; a logged-in expert gets one tied to the account."""

    version = models.ForeignKey(SurveyVersion, on_delete=models.CASCADE, related_name="invitations")
    token = models.CharField(max_length=64, unique=True)
    name = models.CharField(max_length=200, blank=True)
    email = models.EmailField(blank=True)
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked = models.BooleanField(default=False)
    completed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["version", "user"], condition=Q(user__isnull=False), name="one_invitation_per_expert_account"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name or self.email or self.user or 'expert'} on {self.version}"

    def get_absolute_url(self) -> str:
        return reverse("survey_fill", args=[self.token])

    @property
    def expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()


class SurveyAnswer(models.Model):
    invitation = models.ForeignKey(Invitation, on_delete=models.CASCADE, related_name="answers")
    issue = models.CharField(max_length=100)
    metric = models.CharField(max_length=100)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["invitation", "issue"], name="one_answer_per_issue")]

    def __str__(self) -> str:
        return f"{self.issue} → {self.metric}"
