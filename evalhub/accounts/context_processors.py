from __future__ import annotations

from evalhub.accounts.roles import ADMIN, READERS, roles_of


def roles(request) -> dict:
    held = roles_of(request.user)
    return {"user_roles": held, "is_evalhub_admin": ADMIN in held, "is_reader": bool(held & set(READERS))}
