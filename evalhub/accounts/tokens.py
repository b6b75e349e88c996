"""Reading a personal API token: `evh_<public part>_<secret>`. The public part finds the row; the secret
is compared with the stored digest in constant time. Nothing here writes (accounts/actions.py does)."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from datetime import datetime

from evalhub.accounts.models import ApiToken

START = "evh_"
_SHAPE = re.compile(r"^evh_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$")


def new_token() -> tuple[str, str, str]:
    """(public part, secret, the whole token): 48 random bits to find it, 256 to prove it."""
    public, secret = secrets.token_hex(6), secrets.token_urlsafe(32)
    return public, secret, f"{START}{public}_{secret}"


def digest_of(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def token_of(text: str, now: datetime) -> ApiToken | None:
    """The live token `text` is, or None (malformed, unknown, wrong secret, revoked, expired, or its
    user inactive): the caller answers every case alike, so a probe learns nothing."""
    shape = _SHAPE.match(text.strip())
    if shape is None:
        return None
    public, secret = shape.groups()
    token = ApiToken.objects.select_related("user").filter(prefix=public).first()
    if token is None or not hmac.compare_digest(token.digest, digest_of(secret)):
        return None
    if token.revoked_at is not None or (token.expires_at is not None and token.expires_at <= now):
        return None
    return token if token.user.is_active else None
