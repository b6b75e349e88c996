"""One registry for every extension point: a name → what serves under it, loaded on first use.

Every place evalhub may be extended (a model provider, a perturbation, a judge prompt, a kind of long
work, an import format, a GEM strategy, a section of a model's page, an export table, an estimator)
is a `Registry`. Each entry declares its name, what serves it (the object, or "module:attr" imported
only when first asked for, so a web process never loads torch for a provider it does not use), its
configuration type and its docs page; a registry says what it registers and where it is documented.
Every registry made is listed in `POINTS`, which the registry-coverage test reads: each point has an
extending page with a worked example, and each entry loads and is what its registry expects.

As inspect_ai's `registry` and lm-evaluation-harness's `api/registry.py`: one mechanism, one error for
an unknown name (with the nearest known one), lazy imports kept.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")
Decorated = TypeVar("Decorated")


class UnknownName(LookupError):
    """A name no entry of a registry has (the message names the nearest known one)."""


class Misregistered(LookupError):
    """An entry that loads as something its registry does not take (found on first use, or by the
    registry-coverage test before any use)."""


def load(path: str) -> Any:
    """The object at "package.module:attr" (or "package.module.attr")."""
    module, colon, attribute = path.partition(":")
    if not colon:
        module, _, attribute = path.rpartition(".")
    return getattr(importlib.import_module(module), attribute)


@dataclass(frozen=True)
class Entry:
    """One extension: its name, what serves it (an object, or "module:attr" to import on first use), its
    configuration type (a type, "module:attr", or None where the registry's own or none applies) and the
    page that documents it."""

    name: str
    target: object
    config: object
    docs: str


POINTS: dict[str, Registry[Any]] = {}


class Registry(Mapping[str, T], Generic[T]):
    """Name → entry. Reading it as a mapping gives the loaded objects (importing "module:attr" targets
    on first use); `in`, iteration and `entry()` load nothing."""

    def __init__(
        self,
        point: str,
        *,
        docs: str,
        what: str | None = None,
        config: object = None,
        unknown: type[Exception] = UnknownName,
        check: Callable[[str, Any], str] | None = None,
        entries: Mapping[str, T | str] | None = None,
    ) -> None:
        """`point`: the extension point's name (unique); `docs`: its extending page under docs/;
        `what`: what an entry is, for messages; `config`: the configuration type entries share unless
        they declare their own; `unknown`: the error an unknown name raises; `check(name, loaded)`:
        why a loaded entry is not what this registry expects ("" when it is), for the coverage test
        and on first load; `entries`: name → target to add at once."""
        if point in POINTS:
            raise ValueError(f"an extension point named {point!r} exists already ({POINTS[point].docs})")
        self.point: str = point
        self.docs: str = docs
        self.what: str = what or point
        self.config: object = config
        self._unknown, self._check = unknown, check
        self._entries: dict[str, Entry] = {}
        self._loaded: dict[str, T] = {}
        POINTS[point] = self
        for name, target in (entries or {}).items():
            self.add(name, target)

    # --- adding -------------------------------------------------------------------------------------
    def add(self, name: str, target: T | str, *, config: object = None, docs: str | None = None) -> None:
        """Register `target` (an object, or "module:attr") under `name`; a second add replaces the first."""
        if not name:
            raise ValueError(f"a {self.what} needs a name")
        self._entries[name] = Entry(name, target, config if config is not None else self.config, docs or self.docs)
        self._loaded.pop(name, None)

    def register(self, name: str | None = None, *, config: object = None) -> Callable[[Decorated], Decorated]:
        """A decorator: `@REGISTRY.register("name")` (the name defaults to the object's `name` or `__name__`)."""

        def decorate(target: Decorated) -> Decorated:
            found = name or getattr(target, "name", None) or getattr(target, "__name__", "")
            self.add(found, target, config=config)  # type: ignore[arg-type]
            return target

        return decorate

    def remove(self, name: str) -> None:
        self._entries.pop(name, None)
        self._loaded.pop(name, None)

    # --- reading ------------------------------------------------------------------------------------
    def entry(self, name: str) -> Entry:
        if name not in self._entries:
            raise self._unknown(self.unknown_message(name))
        return self._entries[name]

    def unknown_message(self, name: str) -> str:
        hint = difflib.get_close_matches(name, self._entries, n=1)
        suggestion = f" Did you mean {hint[0]!r}?" if hint else ""
        return f"unknown {self.what} {name!r}.{suggestion} Known: {', '.join(sorted(self._entries))}."

    def __getitem__(self, name: str) -> T:
        if name not in self._loaded:
            entry = self.entry(name)
            loaded = load(entry.target) if isinstance(entry.target, str) else entry.target
            if self._check is not None and (why := self._check(name, loaded)):
                raise Misregistered(f"{self.what} {name!r} ({self.path(name)}): {why}")
            self._loaded[name] = loaded  # type: ignore[assignment]
        return self._loaded[name]

    def get(self, name: str, default: Any = None) -> Any:
        # Mapping.get catches KeyError only; an unknown name here raises the registry's own error.
        return self[name] if name in self._entries else default

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def path(self, name: str) -> str:
        """Where a lazy entry lives ("module:attr"), without importing it; the object's qualified name else."""
        target = self.entry(name).target
        if isinstance(target, str):
            return target
        return f"{getattr(target, '__module__', '?')}:{getattr(target, '__qualname__', type(target).__qualname__)}"

    def config_of(self, name: str) -> type | None:
        """The entry's configuration type: declared with it (or by the registry), else the loaded object's
        own `config` attribute (a JobRunner's RunConfig), else None."""
        declared = self.entry(name).config
        if isinstance(declared, str):
            return load(declared)  # type: ignore[no-any-return]
        if declared is not None:
            return declared  # type: ignore[return-value]
        found = getattr(self[name], "config", None)
        return found if isinstance(found, type) else None

    def __repr__(self) -> str:
        return f"Registry({self.point!r}, {len(self)} entries, docs={self.docs!r})"
