"""A kind's configuration as one frozen value: checked once (`errors()`), stored once (the run's
columns and relations, nowhere else), shown on the job page from what was stored (`shown()`).

A kind declares a frozen dataclass subclass of `RunConfig`; its run model has a column of the same
name for each field, except the fields in `relations`, which the run keeps as many-to-many
relations (field → the run's relation name). Sequences are kept as tuples (a frozen value holds no
list), models of a relation in order of their key, so the value read back from a run equals the one
the run was made from.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any, ClassVar, Self

from evalhub.llm.registry import credential_carried


def _frozen(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(inner) for inner in value)
    return value


def _stored(value: Any) -> Any:
    """A JSON column's value (a tuple of tuples becomes a list of lists)."""
    if isinstance(value, tuple):
        return [_stored(inner) for inner in value]
    return value


class RunConfig:
    # {field: the run's many-to-many relation that stores it}
    relations: ClassVar[dict[str, str]] = {}
    # {field: "app_label.Model"} for a field typed loosely (an app that may not import the model): what
    # the API looks its value up as (evalhub.api.runs)
    field_models: ClassVar[dict[str, str]] = {}
    # The fields that hold provider specs (one, or a sequence): kept on the run and shown on its pages,
    # so a spec carrying a credential is refused whichever door started the run (`problems`).
    spec_fields: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        for field in fields(self):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            if field.name in self.relations:
                value = tuple(sorted(value, key=lambda model: (model.pk is None, model.pk or 0)))  # unsaved last
            object.__setattr__(self, field.name, _frozen(value))

    def errors(self) -> list[str]:
        """Every problem with the configuration, as sentences a user can act on."""
        return []

    def problems(self) -> list[str]:
        """`errors()`, and a sentence for each spec that carries a credential: what `JobRunner.create`
        refuses a configuration for, wherever it came from (a form, a command, the API)."""
        specs = []
        for name in self.spec_fields:
            value = getattr(self, name)
            specs += [value] if isinstance(value, str) else list(value)
        return self.errors() + [why for spec in specs if spec and (why := credential_carried(spec))]

    def shown(self) -> dict[str, Any]:
        """What the job page's "Configuration" lists, in the order it lists it."""
        raise NotImplementedError

    def columns(self) -> dict[str, Any]:
        """The run's column values (the relations are set by `store_relations`)."""
        return {
            field.name: _stored(getattr(self, field.name))
            for field in fields(self)  # type: ignore[arg-type]
            if field.name not in self.relations
        }

    def store_relations(self, run: Any) -> None:
        for name, relation in self.relations.items():
            getattr(run, relation).set(getattr(self, name))

    @classmethod
    def of_run(cls, run: Any) -> Self:
        """The configuration a run was made with, read back from its columns and relations."""
        values = {}
        for field in fields(cls):  # type: ignore[arg-type]
            relation = cls.relations.get(field.name)
            values[field.name] = getattr(run, relation).all() if relation else getattr(run, field.name)
        return cls(**values)
