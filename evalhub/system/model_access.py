"""Chat clients for Django code: the shared response cache and the configured prices."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, cast

from django.conf import settings

from evalhub.celery import DEFAULT_QUEUE, GPU_QUEUE
from evalhub.llm import get_chat_client, get_scorer
from evalhub.llm.accounting import Price, UsageMeter
from evalhub.llm.cache import PostgresResponseCache, ResponseCache
from evalhub.llm.capabilities import LOCAL_PROVIDERS
from evalhub.llm.registry import parse_spec
from evalhub.llm.types import UnknownProvider


@lru_cache(maxsize=1)
def shared_cache() -> ResponseCache:
    """On PostgreSQL, one cache for every worker on every machine (the llm_response_cache table);
    otherwise, and when EVALHUB_LLM_CACHE names a file, the SQLite file of this machine."""
    database = settings.DATABASES["default"]
    if database["ENGINE"].endswith("postgresql") and not settings.EVALHUB_LLM_CACHE_FILE_SET:
        return PostgresResponseCache(postgres_dsn(database))
    return ResponseCache(settings.EVALHUB_LLM_CACHE)


def postgres_dsn(database: Mapping[str, Any]) -> str:
    """A libpq connection string for Django's database settings (the cache opens its own connection)."""
    parts = {
        "dbname": database.get("NAME"),
        "user": database.get("USER"),
        "password": database.get("PASSWORD"),
        "host": database.get("HOST"),
        "port": database.get("PORT"),
    }
    return " ".join(f"{name}={_quoted(str(value))}" for name, value in parts.items() if value)


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def configured_prices() -> dict[str, Price]:
    prices = cast(dict[str, tuple[float, float]], settings.EVALHUB_LLM_PRICES)  # checked when the settings load
    return {model: Price(*pair) for model, pair in prices.items()}


def queue_for(specs: Iterable[str], *, local: bool = False) -> str:
    """The Celery queue for work that calls these models: in-process transformers models (or other
    `local` work) run on the GPU workers, API models on the default queue."""
    local = local or any(_provider(spec) in LOCAL_PROVIDERS for spec in specs if spec)
    return GPU_QUEUE if local else DEFAULT_QUEUE


def _provider(spec) -> str:
    try:
        return parse_spec(spec).provider
    except UnknownProvider:  # refused where it is used, with its reason; no queue to choose
        return ""


def chat_client(spec, meter: UsageMeter | None = None):
    # With Redis, a provider's requests and tokens per minute and calls in flight are counted
    # across every worker (evalhub.llm.shared_limits); embedded, per process.
    return get_chat_client(
        spec, cache=shared_cache(), prices=configured_prices(), meter=meter, shared_limits_url=settings.REDIS_URL
    )


@lru_cache(maxsize=8)
def local_or_remote_scorer(spec: str, dtype: str = "auto", device: str = ""):
    """A log-probability scorer, built once per worker process and spec (weights load once)."""
    options = {}
    if parse_spec(spec).provider == "transformers":
        options = {"dtype": None if dtype == "auto" else dtype, "device": device or None}
    return get_scorer(spec, **options)
