"""Writes of the accounts app: personal API tokens made, revoked and marked used."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from evalhub.accounts.models import ApiToken, Scope
from evalhub.accounts.roles import ADMIN, has_role
from evalhub.accounts.tokens import digest_of, new_token

logger = logging.getLogger(__name__)

MAX_TOKENS = 20  # live tokens a person may hold: enough for every pipeline, few enough to review
MAX_DAYS = 366
USE_NOTED_EVERY = timedelta(minutes=1)  # last_used_at is a write: once a minute, not once a request


class TokenRejected(ValueError):
    """Why a token cannot be made (the form says it)."""


def check_token_request(user: Any, name: str, scope: str, days: int | None) -> list[str]:
    errors = []
    if not name.strip():
        errors.append("Name the token after what will use it.")
    if scope not in Scope.values:
        errors.append(f"The scope is one of {', '.join(Scope.values)}.")
    elif scope == Scope.ADMIN and not has_role(user, ADMIN):
        errors.append("Only an admin may make an admin token.")
    if days is not None and not 1 <= days <= MAX_DAYS:
        errors.append(f"A token expires within 1 to {MAX_DAYS} days (or never).")
    live = ApiToken.objects.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
    if live.filter(user=user, revoked_at__isnull=True).count() >= MAX_TOKENS:  # expired ones hold nothing
        errors.append(f"You hold {MAX_TOKENS} live tokens: revoke one first.")
    return errors


def do_create_token(user: Any, name: str, scope: str, days: int | None) -> tuple[ApiToken, str]:
    """A new token for `user` and the token's text, which is shown once and never stored."""
    if errors := check_token_request(user, name, scope, days):
        raise TokenRejected(" ".join(errors))
    public, secret, text = new_token()
    expires = timezone.now() + timedelta(days=days) if days else None
    token = ApiToken.objects.create(
        user=user, name=name.strip()[:100], prefix=public, digest=digest_of(secret), scope=scope, expires_at=expires
    )
    logger.info("API token %s… (%s) made by %s", public, scope, user.get_username())
    return token, text


def do_revoke_token(token: ApiToken, user: Any) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        logger.info("API token %s… revoked by %s", token.prefix, user.get_username())
    return token


def do_note_token_use(token: ApiToken) -> None:
    """When the token was last used, to the minute (one conditional UPDATE, none within the minute)."""
    now = timezone.now()
    if token.last_used_at is not None and now - token.last_used_at < USE_NOTED_EVERY:
        return
    stale = Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - USE_NOTED_EVERY)
    ApiToken.objects.filter(stale, pk=token.pk).update(last_used_at=now)
    token.last_used_at = now
