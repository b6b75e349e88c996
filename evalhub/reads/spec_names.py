"""Spec → the catalog's model it names: the judges board and the judge lab both show a judge
spec under the name of the LanguageModel it calls."""

from __future__ import annotations

from evalhub.catalog.models import LanguageModel
from evalhub.llm.registry import parse_spec
from evalhub.llm.types import UnknownProvider


def spec_models(specs: set[str]) -> dict[str, str]:
    """spec → the slug of the LanguageModel it names, matched on (provider, model id), or on a
    model id (or slug) equal to the whole spec; specs with no such model are left out."""
    by_key: dict[tuple[str, str], str] = {}
    by_text: dict[str, str] = {}
    for slug, provider, model_id in LanguageModel.objects.exclude(is_human=True).values_list(
        "slug", "provider", "model_id"
    ):
        if provider and model_id:
            by_key[(provider, model_id)] = slug
        by_text.setdefault(model_id, slug)
        by_text.setdefault(slug, slug)
    out = {}
    for spec in specs:
        try:
            parsed = parse_spec(spec)
            key = (parsed.provider, parsed.model)
        except UnknownProvider:
            key = ("", "")
        found = by_key.get(key) or by_text.get(spec)
        if found:
            out[spec] = found
    return out
