"""Chat clients for Django code: the shared response cache and the configured prices."""

from __future__ import annotations

from functools import lru_cache

from django.conf import settings

from evalhub.llm import get_chat_client
from evalhub.llm.accounting import Price, UsageMeter
from evalhub.llm.cache import ResponseCache


@lru_cache(maxsize=1)
def shared_cache() -> ResponseCache:
    return ResponseCache(settings.EVALHUB_LLM_CACHE)


def configured_prices() -> dict[str, Price]:
    return {model: Price(*pair) for model, pair in settings.EVALHUB_LLM_PRICES.items()}


def chat_client(spec, meter: UsageMeter | None = None):
    return get_chat_client(spec, cache=shared_cache(), prices=configured_prices(), meter=meter)
