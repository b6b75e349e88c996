"""Writes to surveys. Answers are checked against the version they belong to."""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import slugify

from evalhub.core.dhp.expert_weights import ExpertWeights, expert_weights
from evalhub.core.prompts.surveys import TEMPLATES
from evalhub.surveys.models import Invitation, Survey, SurveyAnswer, SurveyVersion


class SurveyRejected(ValueError):
    pass


class InvitationClosed(Exception):
    """The link cannot be used; `reason` is safe to show (it reveals nothing of the survey)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


MAX_INVITE_DAYS = 3650


def check_invite_days(text: str) -> int | None:
    """How many days a new link lives, from the form's field; blank means it never expires."""
    if not text.strip():
        return None
    try:
        days = int(text)
    except ValueError:
        raise SurveyRejected(f"the link's lifetime must be a whole number of days, not {text[:20]!r}.") from None
    if not 1 <= days <= MAX_INVITE_DAYS:
        raise SurveyRejected(f"the link's lifetime must be between 1 and {MAX_INVITE_DAYS} days (or blank: no end).")
    return days


def check_content(metrics: object, issues: object) -> tuple[list[dict], list[dict]]:
    def entries(value: object, kind: str, text: str) -> list[dict]:
        if not isinstance(value, list) or not value:
            raise SurveyRejected(f"{kind} must be a non-empty list.")
        keys = []
        for entry in value:
            if (
                not isinstance(entry, dict)
                or not str(entry.get("key", "")).strip()
                or not str(entry.get(text, "")).strip()
            ):
                raise SurveyRejected(f"every entry of {kind} needs a key and a {text}.")
            # Flat text fields only: a nested value has no place on the expert's page, and a deep one
            # once failed the save itself (RecursionError).
            if not all(isinstance(field, str) and isinstance(inner, str) for field, inner in entry.items()):
                raise SurveyRejected(f"every field of an entry of {kind} must be text.")
            keys.append(slugify(entry["key"]).replace("-", "_"))
        if len(set(keys)) != len(keys):
            raise SurveyRejected(f"{kind} keys must be unique.")
        return [{**entry, "key": key} for entry, key in zip(value, keys, strict=True)]

    checked_metrics = entries(metrics, "metrics", "definition")
    if len(checked_metrics) < 2:
        raise SurveyRejected("a survey needs at least two metrics to choose between.")
    return checked_metrics, entries(issues, "issues", "description")


def do_create_from_template(key: str, user: Any = None) -> Survey:
    template = TEMPLATES[key]
    with transaction.atomic():
        survey, created = Survey.objects.get_or_create(
            slug=key, defaults={"title": template["title"], "created_by": user}
        )
        if created:
            SurveyVersion.objects.create(
                survey=survey,
                number=1,
                instructions=template["instructions"],
                metrics=template["metrics"],
                issues=template["issues"],
            )  # a draft: the admin reads it, may adapt it, then publishes
    return survey


def do_create_blank(title: str, user: Any = None) -> Survey:
    """A survey of the admin's own task type; its first version comes from the edit form."""
    base = slugify(title)[:90]
    if not base:
        raise SurveyRejected("give the survey a title.")
    slug, n = base, 1
    while Survey.objects.filter(slug=slug).exists():
        n += 1
        slug = f"{base}-{n}"
    return Survey.objects.create(slug=slug, title=title.strip()[:200], created_by=user)


def do_edit(survey: Survey, instructions: str, metrics: object, issues: object) -> SurveyVersion:
    """Edit the draft, or start a new version when the latest is published (answers keep theirs)."""
    metrics, issues = check_content(metrics, issues)
    with transaction.atomic():
        latest = Survey.objects.select_for_update().get(pk=survey.pk).latest
        if latest is None or latest.published:
            return SurveyVersion.objects.create(
                survey=survey,
                number=(latest.number if latest else 0) + 1,
                instructions=instructions,
                metrics=metrics,
                issues=issues,
            )
        latest.instructions, latest.metrics, latest.issues = instructions, metrics, issues
        latest.save(update_fields=["instructions", "metrics", "issues"])
        return latest


def do_publish(version: SurveyVersion) -> SurveyVersion:
    version.published = True
    version.save(update_fields=["published"])
    return version


def do_invite(version: SurveyVersion, *, name: str = "", email: str = "", days: int | None = 30) -> Invitation:
    if days is not None and not 1 <= days <= MAX_INVITE_DAYS:
        raise SurveyRejected(f"the link's lifetime must be between 1 and {MAX_INVITE_DAYS} days (or none).")
    if not version.published:
        raise SurveyRejected("publish this version before inviting experts.")
    expires = timezone.now() + timedelta(days=days) if days else None
    return Invitation.objects.create(
        version=version, token=secrets.token_urlsafe(24), name=name, email=email, expires_at=expires
    )


def do_invitation_for_expert(version: SurveyVersion, user: Any) -> Invitation:
    """A logged-in expert's own invitation: one per account and version."""
    try:
        with transaction.atomic():
            return Invitation.objects.get_or_create(
                version=version, user=user, defaults={"token": secrets.token_urlsafe(24)}
            )[0]
    except IntegrityError:  # two tabs at once
        return Invitation.objects.get(version=version, user=user)


def do_revoke(invitation: Invitation) -> None:
    invitation.revoked = True
    invitation.save(update_fields=["revoked"])


def check_invitation(token: str) -> Invitation:
    invitation = Invitation.objects.select_related("version__survey").filter(token=token).first()
    if invitation is None:
        raise InvitationClosed("This survey link is not valid. Please check it, or ask for a new one.")
    if invitation.revoked:
        raise InvitationClosed("This survey link was withdrawn. Please ask for a new one if you think this is wrong.")
    if invitation.expired and invitation.completed_at is None:
        raise InvitationClosed("This survey link has expired. Please ask for a new one.")
    return invitation


def do_answer(invitation: Invitation, issue: str, metric: str) -> SurveyAnswer:
    version = invitation.version
    if issue not in version.issue_keys() or metric not in version.metric_keys():
        raise SurveyRejected("that answer does not belong to this survey.")
    with transaction.atomic():
        # Checked again under the invitation's lock: the request may have loaded it just before a
        # submit (or a revoke) committed, and an answer must never change after the submit.
        current = Invitation.objects.select_for_update().get(pk=invitation.pk)
        if current.completed_at is not None:
            raise SurveyRejected("these answers were already submitted.")
        if current.revoked:
            raise SurveyRejected("this survey link was withdrawn.")
        answer, _ = SurveyAnswer.objects.update_or_create(invitation=current, issue=issue, defaults={"metric": metric})
    return answer


def do_submit(invitation: Invitation) -> bool:
    """Mark the answers final; False when they already were (nothing changes)."""
    with transaction.atomic():
        invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
        if invitation.completed_at is not None:
            return False
        answered = set(invitation.answers.values_list("issue", flat=True))
        missing = [key for key in invitation.version.issue_keys() if key not in answered]
        if missing:
            raise SurveyRejected(f"{len(missing)} quality issue(s) still need an answer.")
        invitation.completed_at = timezone.now()
        invitation.save(update_fields=["completed_at"])
    return True


def version_weights(version: SurveyVersion) -> tuple[ExpertWeights, int]:
    """Weights from completed answers only, and the number of respondents."""
    answers = SurveyAnswer.objects.filter(
        invitation__version=version, invitation__completed_at__isnull=False, invitation__revoked=False
    )
    respondents = version.invitations.filter(completed_at__isnull=False, revoked=False).count()
    pairs = answers.values_list("issue", "metric")
    return expert_weights(pairs, version.issue_keys(), version.metric_keys()), respondents
