"""Who may call an operation of the API: the roles its page requires and the token scope it needs,
declared once per operation (`auth=allowed(...)`) and checked as the token is read, before anything of
the call is: a caller who may not call an operation learns nothing from how it would have answered. A
token acts as its person, within its scope, so the API never lets a person do more than the pages; the
route × role test reads these declarations from the API (`declared`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest
from ninja.errors import HttpError

from evalhub.accounts.models import Scope
from evalhub.accounts.roles import READERS, has_role
from evalhub.api.auth import TokenAuth


@dataclass(frozen=True)
class Access:
    roles: tuple[str, ...]  # the person holds one of these (as the operation's page requires)
    scope: str  # the token allows at least this (Scope)


class PersonalToken(TokenAuth):
    """The token, checked against one operation's `Access`: 401 without a live token, 403 with the reason
    where its scope or its person's roles fall short."""

    def __init__(self, access: Access) -> None:
        super().__init__()
        self.access = access

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        found = super().authenticate(request, token)
        if found is None:
            return None
        if not found.allows(self.access.scope):
            raise HttpError(403, f"this token's scope is {found.scope}; this needs {self.access.scope}")
        if not has_role(found.user, *self.access.roles):
            raise HttpError(403, "your roles do not allow this")
        return found


def allowed(*roles: str, scope: str = Scope.READ) -> PersonalToken:
    """An operation's `auth`: one of `roles` (READERS where none is named, as the pages'
    `role_required()`), and a token whose scope covers `scope`."""
    return PersonalToken(Access(roles or READERS, scope))


def declared(api: Any) -> dict[str, Access]:
    """Each operation's id in the schema → its Access (an operation without one is missing here)."""
    found = {}
    for _prefix, router in api._routers:
        for path_view in router.path_operations.values():
            for operation in path_view.operations:
                callbacks = [c for c in operation.auth_callbacks if isinstance(c, PersonalToken)]
                if callbacks:
                    found[operation.operation_id or api.get_openapi_operation_id(operation)] = callbacks[0].access
    return found
