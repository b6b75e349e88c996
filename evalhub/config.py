"""Reading and validating settings from environment variables.

Every option evalhub understands is read here, once, at settings load; a bad value stops
the process with a message that names the variable (healthchecks' settings style).
"""

from __future__ import annotations

import builtins
import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlparse


class ConfigError(Exception):
    """A setting from the environment is missing or malformed."""


class Env:
    """Typed access to an environment mapping; errors name the variable."""

    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        self.environ = os.environ if environ is None else environ

    def str(self, name: str, default: str = "") -> str:
        return self.environ.get(name, default).strip()

    def bool(self, name: builtins.str, default: bool = False) -> bool:
        raw = self.str(name)
        if not raw:
            return default
        lowered = raw.lower()
        if lowered in {"1", "true", "yes", "on"}:
            return True
        if lowered in {"0", "false", "no", "off"}:
            return False
        raise ConfigError(f"{name}={raw!r} is not a boolean; use true or false.")

    def int(self, name: builtins.str, default: builtins.int, *, minimum: builtins.int | None = None) -> builtins.int:
        raw = self.str(name)
        if not raw:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise ConfigError(f"{name}={raw!r} is not an integer.") from None
        if minimum is not None and value < minimum:
            raise ConfigError(f"{name}={value} must be at least {minimum}.")
        return value

    def json(self, name: builtins.str, default: object) -> object:
        raw = self.str(name)
        if not raw:
            return default
        try:
            return json.loads(raw)
        except ValueError as error:
            raise ConfigError(f"{name} is not valid JSON ({error}).") from None

    def choice(self, name: builtins.str, choices: tuple[builtins.str, ...]) -> builtins.str:
        """One of `choices` (case-insensitive); unset means the first."""
        value = self.str(name).lower() or choices[0]
        if value not in choices:
            raise ConfigError(f"{name}={value!r} is not one of {', '.join(choices)}.")
        return value

    def list(self, name: builtins.str, default: builtins.list[builtins.str]) -> builtins.list[builtins.str]:
        raw = self.str(name)
        if not raw:
            return default
        return [item.strip() for item in raw.split(",") if item.strip()]


def check_database_url(url: str) -> str:
    scheme = urlparse(url).scheme
    if scheme not in {"postgres", "postgresql", "sqlite"}:
        raise ConfigError(f"DATABASE_URL has scheme {scheme!r}; evalhub supports postgres:// and sqlite:///.")
    return url


def check_redis_url(url: str) -> str:
    parsed = urlparse(url)
    if parsed.scheme not in {"redis", "rediss"} or not parsed.hostname:
        raise ConfigError("REDIS_URL must look like redis://host:6379/0 (or rediss:// for TLS).")
    return url


def embedded_secret_key(data_dir: Path) -> str:
    """A per-installation key for the embedded mode, kept in the data folder (mode 0600)."""
    path = data_dir / "secret_key"
    if path.exists():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(key)
    return key
