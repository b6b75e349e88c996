"""`{% if user|may_open:url %}`: a link shown only to whoever its page lets in (evalhub.accounts.roles)."""

from __future__ import annotations

from typing import Any

from django import template

from evalhub.accounts.roles import may_open as user_may_open
from evalhub.accounts.roles import roles_needed as view_roles

register = template.Library()


@register.filter
def may_open(user: Any, path: str) -> bool:
    return user_may_open(user, path)


@register.filter
def roles_needed(path: str) -> str:
    """The roles that open `path`, for a sentence: "adjudicator", "admin or viewer"."""
    return " or ".join(view_roles(path))
