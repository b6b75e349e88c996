"""The registry-coverage test: every extension point is one `evalhub.core.registry.Registry`, listed in
`POINTS`; each has an extending page with a worked example that names where it lives, and every entry
of every point loads and is what its registry takes, before anything runs."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from evalhub.core.registry import POINTS, Registry

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def _made_in_source() -> dict[str, str]:
    """Each module-level `NAME = Registry(...)` in evalhub's source: "module:NAME" → its point's name."""
    found = {}
    for path in sorted((ROOT / "evalhub").rglob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            target, value = None, None
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                target, value = node.target.id, node.value
            elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                target, value = node.targets[0].id, node.value
            if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "Registry":
                module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
                found[f"{module}:{target}"] = ast.literal_eval(value.args[0])
    return found


MADE = _made_in_source()


def _registry(where: str) -> Registry:
    module, _, name = where.partition(":")
    return getattr(importlib.import_module(module), name)


def test_every_registry_in_the_source_is_an_extension_point_and_there_are_all_ten_kinds():
    points = {where: _registry(where) for where in MADE}
    assert {registry.point for registry in points.values()} == set(MADE.values())
    assert all(POINTS[registry.point] is registry for registry in points.values())
    # providers, scorers, perturbations, three judge prompts, job kinds, import formats, GEM strategies,
    # model page sections, export tables, estimators
    assert len(MADE) >= 12


@pytest.mark.parametrize("where", sorted(MADE))
def test_each_point_has_an_extending_page_with_an_example_that_names_it(where):
    registry = _registry(where)
    page = DOCS / registry.docs
    assert page.parent == DOCS / "extending" and page.exists(), f"{registry.point}: no page {registry.docs}"
    text = page.read_text()
    module, _, name = where.partition(":")
    assert name in text and (module.replace(".", "/") + ".py" in text or module in text), (
        f"{registry.docs} does not say where {where} lives"
    )
    assert "```python" in text


@pytest.mark.parametrize("where", sorted(MADE))
def test_every_entry_loads_and_is_what_its_registry_takes(where):
    registry = _registry(where)
    if registry.point == "job kind":
        import django.apps  # the apps register their kinds when Django starts

        assert django.apps.apps.ready
    assert len(registry), f"{registry.point} has no entry"
    for name in registry:
        registry[name]  # imports a lazy entry and runs the registry's check: Misregistered else
        config = registry.config_of(name)
        assert config is None or isinstance(config, type), f"{registry.point} {name}: config {config!r}"
        assert (DOCS / registry.entry(name).docs).exists()


def test_every_extending_page_documents_a_point_or_the_improvers_base():
    documented = {_registry(where).docs for where in MADE}
    pages = {f"extending/{page.name}" for page in (DOCS / "extending").glob("*.md") if page.name != "index.md"}
    # Improvers are job kinds (one ImproverRunner subclass each); their page extends job-kinds.md's.
    assert pages - documented == {"extending/improvers.md"}
    index = (DOCS / "extending" / "index.md").read_text()
    assert all(page.removeprefix("extending/") in index for page in pages)
