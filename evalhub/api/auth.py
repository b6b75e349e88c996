"""Bearer-token authentication for the API: `Authorization: Bearer evh_…`. The request then acts as the
token's person (`request.user`) and `request.auth` is the token. No session: a browser's cookie never
authenticates an API call, so the API needs no CSRF token and a page's session cannot be replayed here."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from ninja.security import HttpBearer

from evalhub.accounts.actions import do_note_token_use
from evalhub.accounts.tokens import token_of


class TokenAuth(HttpBearer):
    def __call__(self, request: HttpRequest) -> Any:
        # Parsed here rather than by HttpBearer, which logs a malformed header whole under DEBUG: it may
        # carry a token.
        scheme, _, text = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not text:
            return None
        return self.authenticate(request, text)

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        found = token_of(token, timezone.now())
        if found is None:
            return None
        request.user = found.user
        do_note_token_use(found)
        return found
