"""Roles are Django groups. A superuser holds every role.

- admin: manages benchmarks, imports, runs, surveys and users;
- adjudicator: decides debates the agents could not settle, blind: an adjudicator who holds no
  other role sees the adjudication pages only, never a page or export that names models;
- expert: fills expert-weight surveys;
- viewer: reads everything, changes nothing.
A logged-in user in none of these groups is an outsider and sees nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import PermissionDenied

ADMIN = "admin"
ADJUDICATOR = "adjudicator"
EXPERT = "expert"
VIEWER = "viewer"
ALL_ROLES = (ADMIN, ADJUDICATOR, EXPERT, VIEWER)
# Who may read results (model names included): every role but adjudicator, who must stay blind.
READERS = (ADMIN, EXPERT, VIEWER)


def roles_of(user: Any) -> frozenset[str]:
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return frozenset()
    if user.is_superuser:
        return frozenset(ALL_ROLES)
    cached = getattr(user, "_evalhub_roles", None)
    if cached is None:
        cached = frozenset(user.groups.filter(name__in=ALL_ROLES).values_list("name", flat=True))
        user._evalhub_roles = cached
    return cached


def has_role(user: Any, *roles: str) -> bool:
    """True when the user holds at least one of `roles` (any role when none is given)."""
    held = roles_of(user)
    return bool(held & set(roles or ALL_ROLES))


def role_required(*roles: str) -> Callable:
    """View decorator: 403 unless the logged-in user holds one of `roles` (a reader's role if none)."""
    roles = roles or READERS

    def decorator(view: Callable) -> Callable:
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            if not has_role(request.user, *roles):
                raise PermissionDenied
            return view(request, *args, **kwargs)

        wrapped.roles_required = roles  # type: ignore[attr-defined]  # read by may_open: links follow the rule
        return wrapped

    return decorator


def may_open(user: Any, path: str) -> bool:
    """Whether `user` may open the page at `path` (a query string allowed): the roles its view was
    decorated with, read from the view itself, so a link is shown by the same rule that guards its page.
    A path no view answers is left to its own 404."""
    roles = roles_needed(path)
    return not roles or has_role(user, *roles)


def roles_needed(path: str) -> tuple[str, ...]:
    """The roles the view at `path` lets in, any one sufficing (empty: every logged-in person, or no view)."""
    from django.urls import Resolver404, resolve

    try:
        view = resolve(urlsplit(path).path).func
    except Resolver404:
        return ()
    return tuple(getattr(view, "roles_required", ()))
