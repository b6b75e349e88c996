"""Model access: chat clients and log-probability scorers, with no Django import.

from evalhub.llm import get_chat_client
client = get_chat_client("openai:gpt-4o-mini", cache=ResponseCache("var/llm-cache.sqlite3"))
completion = await client.complete([{"role": "user", "content": "Hi"}])
"""

from __future__ import annotations

from evalhub.llm.registry import ProviderSpec, get_chat_client, get_scorer, parse_spec

__all__ = ["ProviderSpec", "get_chat_client", "get_scorer", "parse_spec"]
