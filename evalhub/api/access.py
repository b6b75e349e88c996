"""Who may call an operation of the API: the roles its page requires and the token scope it needs. One
declaration per operation (`@allowed`), checked on every call and read by the route × role test; a
token acts as its person, within its scope, so the API never lets a person do more than the pages."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import wraps
from typing import Any

from ninja.errors import HttpError

from evalhub.accounts.models import Scope
from evalhub.accounts.roles import READERS, has_role


@dataclass(frozen=True)
class Access:
    roles: tuple[str, ...]  # the person holds one of these (as the operation's page requires)
    scope: str  # the token allows at least this (Scope)


# Operation (its function's name) → who may call it: every operation declares one.
DECLARED: dict[str, Access] = {}


def allowed(*roles: str, scope: str = Scope.READ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Declare and enforce an operation's access: one of `roles` (READERS where none is named, as the
    pages' `role_required()`), and a token whose scope covers `scope`."""
    access = Access(roles or READERS, scope)

    def decorate(operation: Callable[..., Any]) -> Callable[..., Any]:
        DECLARED[operation.__name__] = access

        @wraps(operation)
        def checked(request: Any, *args: Any, **kwargs: Any) -> Any:
            if not request.auth.allows(access.scope):
                raise HttpError(403, f"this token's scope is {request.auth.scope}; this needs {access.scope}")
            if not has_role(request.user, *access.roles):
                raise HttpError(403, "your roles do not allow this")
            return operation(request, *args, **kwargs)

        return checked

    return decorate
