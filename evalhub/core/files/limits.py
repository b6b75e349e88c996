"""How long each text a file brings may be: the columns it is stored in. A longer one is that row's
problem, named with its field and line, never a database error (issue 78)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

STORED_LENGTHS = {
    "prompt_id": 200,  # Prompt.external_id
    "category": 100,  # Prompt.category
    "response_variant": 100,  # Response.variant
    "model": 100,  # a model's slug
    "model_a": 100,
    "model_b": 100,
}


def length_problems(row: Mapping[str, Any]) -> list[str]:
    """A problem for each field of the row that is longer than the column it goes to."""
    return [
        f"{name!r} is longer than {limit} characters ({len(value.strip())})."
        for name, limit in STORED_LENGTHS.items()
        if isinstance(value := row.get(name), str) and len(value.strip()) > limit
    ]
