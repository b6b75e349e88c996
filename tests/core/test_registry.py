"""evalhub's one registry: entries load on first use, an unknown name is refused with the nearest known
one, and an entry that is not what its registry takes is refused by name."""

from __future__ import annotations

import sys

import pytest

from evalhub.core.registry import POINTS, Misregistered, Registry, UnknownName


@pytest.fixture
def registry():
    made = Registry(
        "test point",
        docs="extending/index.md",
        what="widget",
        check=lambda name, target: "" if callable(target) else "a widget is callable",
    )
    yield made
    POINTS.pop("test point")


def test_a_lazy_entry_is_imported_only_when_first_asked_for(registry, tmp_path, monkeypatch):
    (tmp_path / "far_widgets.py").write_text("def widget():\n    return 'made'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    registry.add("far", "far_widgets:widget")
    assert "far" in registry and list(registry) == ["far"]
    assert "far_widgets" not in sys.modules  # `in`, iteration and entry() load nothing
    assert registry.path("far") == "far_widgets:widget"
    assert registry["far"]() == "made"
    assert "far_widgets" in sys.modules


def test_an_unknown_name_is_refused_with_the_nearest_known_one(registry):
    registry.add("sprocket", lambda: None)
    with pytest.raises(UnknownName, match="unknown widget 'sprockt'. Did you mean 'sprocket'\\? Known: sprocket."):
        registry["sprockt"]
    assert registry.get("sprockt") is None


def test_an_entry_that_is_not_what_the_registry_takes_is_refused_by_name(registry):
    registry.add("plain", "os.path:sep")
    with pytest.raises(Misregistered, match="widget 'plain' \\(os.path:sep\\): a widget is callable"):
        registry["plain"]


def test_each_entry_declares_its_configuration_type_and_page(registry):
    class Settings:
        pass

    registry.add("configured", lambda: None, config=Settings, docs="extending/providers.md")
    registry.add("by_path", lambda: None, config=f"{__name__}:Registry")
    assert registry.config_of("configured") is Settings
    assert registry.config_of("by_path") is Registry
    assert registry.entry("configured").docs == "extending/providers.md"
    assert registry.entry("by_path").docs == "extending/index.md"


def test_two_registries_cannot_claim_one_extension_point(registry):
    with pytest.raises(ValueError, match="an extension point named 'test point' exists already"):
        Registry("test point", docs="extending/index.md")


def test_a_decorator_registers_under_the_objects_own_name(registry):
    @registry.register()
    def spanner():
        return "turned"

    assert registry["spanner"] is spanner
