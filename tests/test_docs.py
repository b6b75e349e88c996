"""The manual covers every extension point: each registry (what a new provider, perturbation, judge
prompt, kind of long work, import format, GEM strategy, model-page section or export table is added
to) exists where its page says, and an extending page names it."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

EXTENDING = Path(__file__).resolve().parent.parent / "docs" / "extending"

# (module, the registry in it, the words an extending page names it by)
REGISTRIES = [
    ("evalhub.llm.registry", "CHAT_PROVIDERS", ("evalhub/llm/registry.py", "CHAT_PROVIDERS")),
    ("evalhub.llm.registry", "SCORERS", ("SCORERS",)),
    ("evalhub.core.dhp.perturbations", "register", ("evalhub/core/dhp/perturbations.py", "register(")),
    ("evalhub.core.prompts.judges", "TASKS", ("evalhub/core/prompts/judges.py", "TASKS")),
    ("evalhub.core.prompts.judges", "STEPS", ("STEPS",)),
    ("evalhub.jobs.kinds", "register", ("kinds.register(",)),
    ("evalhub.core.files.judgments", "CONVERTERS", ("evalhub/core/files/judgments.py", "CONVERTERS")),
    ("evalhub.core.gem.validation", "STRATEGIES", ("evalhub/core/gem/validation.py", "STRATEGIES")),
    ("evalhub.reads.model_sections", "register", ("evalhub.reads.model_sections.register",)),
    ("evalhub.catalog.exports", "TABLES", ("evalhub/catalog/exports.py", "TABLES")),
]


@pytest.mark.parametrize(("module", "name", "words"), REGISTRIES, ids=lambda value: str(value))
def test_every_registry_exists_and_an_extending_page_names_it(module, name, words):
    assert hasattr(importlib.import_module(module), name), f"{module}.{name} moved: its page is out of date"
    pages = {page.name: page.read_text() for page in EXTENDING.glob("*.md")}
    naming = [page for page, text in pages.items() if all(word in text for word in words)]
    assert naming, f"no page in docs/extending/ names {module}.{name} (by {', '.join(words)})"
