"""Starting runs through the API: one operation per kind of long work (`POST /runs/<kind>`), its body
the kind's own configuration (`RunConfig`), typed in the schema from the configuration's fields, models
named by slug (benchmarks, models, criteria) or by id (debate runs, judge versions, splits, templates).
The run starts the one way every run starts, `JobRunner.create(config, user)`, so its checks
(`RunConfig.errors()`) answer here as on the forms (422 lists them), and the job is returned to follow."""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping, Sequence
from typing import Any

from django.apps import apps
from django.db import models
from ninja import Router
from ninja.errors import HttpError
from ninja.responses import Status
from pydantic import BaseModel, create_model

from evalhub.accounts.models import Scope
from evalhub.accounts.roles import ADMIN
from evalhub.api.access import allowed
from evalhub.api.jobs import JobOut
from evalhub.api.uploads import UPLOAD, Rejected, RowProblem
from evalhub.jobs.config import RunConfig
from evalhub.jobs.kinds import KINDS
from evalhub.jobs.models import Job
from evalhub.llm.types import redact

router = Router(tags=["runs"])


def _model_of(hint: Any) -> type[models.Model] | None:
    if isinstance(hint, str):  # a configuration's `field_models`: "app_label.Model"
        return apps.get_model(hint)
    return hint if isinstance(hint, type) and issubclass(hint, models.Model) else None


def _key_of(model: type[models.Model]) -> str:
    """How the API names an object of `model`: its slug where it has one, else its id."""
    return "slug" if any(field.name == "slug" for field in model._meta.fields) else "pk"


def _wire_type(hint: Any) -> Any:
    """The JSON type of a configuration field's type: a model becomes its slug or id."""
    if (model := _model_of(hint)) is not None:
        return str if _key_of(model) == "slug" else int
    origin, arguments = typing.get_origin(hint), typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        return typing.Union[tuple(_wire_type(argument) for argument in arguments)]  # noqa: UP007 (built at run time)
    if origin is not None and isinstance(origin, type) and issubclass(origin, Mapping):
        return dict[str, Any]
    if origin is not None and isinstance(origin, type) and issubclass(origin, Sequence) and origin is not str:
        return list[_wire_type(arguments[0]) if arguments else Any]  # type: ignore[misc]
    return hint


def _hints(config: type[RunConfig]) -> dict[str, Any]:
    hints = typing.get_type_hints(config)
    return {**hints, **config.field_models}


def body_of(kind: str, config: type[RunConfig]) -> type[BaseModel]:
    """The pydantic model of `config`'s fields as JSON (the schema's body of `POST /runs/<kind>`)."""
    hints, fields = _hints(config), {}
    for field in dataclasses.fields(config):  # type: ignore[arg-type]  # every RunConfig is a dataclass
        if field.default is not dataclasses.MISSING:
            default: Any = field.default
        elif field.default_factory is not dataclasses.MISSING:
            default = field.default_factory()
        else:
            default = ...
        if isinstance(default, tuple):  # a frozen configuration's sequence: a JSON list
            default = list(default)
        fields[field.name] = (_wire_type(hints[field.name]), default)
    return create_model(f"{config.__name__}Body", **fields)  # type: ignore[call-overload]


def _object(model: type[models.Model], value: Any, name: str) -> models.Model:
    key = _key_of(model)
    found = model._default_manager.filter(**{key: value}).first()
    if found is None:
        raise LookupError(f"{name}: no {model._meta.verbose_name} {value!r}")
    return found


def config_from(config: type[RunConfig], values: Mapping[str, Any]) -> Any:
    """The configuration `values` (JSON) name, its models looked up; LookupError for one that is not there."""
    hints, made = _hints(config), dict[str, Any]()
    for name, value in values.items():
        hint = hints[name]
        arguments = [a for a in typing.get_args(hint) if a is not type(None)]
        model = _model_of(hint) or (_model_of(arguments[0]) if len(arguments) == 1 else None)
        if model is not None and value is not None and not isinstance(value, list):
            made[name] = _object(model, value, name)
        elif model is not None and isinstance(value, list):
            made[name] = [_object(model, one, name) for one in value]
        else:
            made[name] = value
    return config(**made)


def _rejected(problems: list[str]) -> Status[Rejected]:
    # A sentence may quote a spec: redacted as the forms' and the commands' are, never a credential.
    problems = [redact(problem) for problem in problems]
    listed = [RowProblem(line=None, place="", message=problem) for problem in problems]
    return Status(422, Rejected(detail=" ".join(problems), error_count=len(problems), errors=listed))


def _operation(kind: str) -> Any:
    runner = KINDS[kind]
    body_type = body_of(kind, runner.config)

    def start(request: Any, body: Any) -> Any:
        try:
            config = config_from(runner.config, body.model_dump())
        except (LookupError, TypeError, ValueError) as refused:  # a name not there, a value the type refuses
            return _rejected([str(refused)])
        if problems := config.problems():
            return _rejected(problems)
        try:
            made = runner.create(config, request.user)
        except runner.rejected as rejected:
            return _rejected([str(rejected)])
        job = made if isinstance(made, Job) else getattr(made, "job", None)
        if job is None:
            raise HttpError(500, f"a {kind} run was made without a job")
        return job

    start.__name__ = f"start_{kind}"
    start.__doc__ = f"Start a {kind} run: its configuration's checks answer as its form's do; returns its job."
    start.__annotations__ = {"request": Any, "body": body_type}
    return start


def add_operations() -> None:
    """One `POST /runs/<kind>` per kind of long work with a configuration (called once, at import)."""
    for kind in sorted(KINDS):
        if KINDS.config_of(kind) is None or kind == UPLOAD:  # an upload's run starts from its file (imports)
            continue
        router.post(
            f"/runs/{kind}",
            response={200: JobOut, 422: Rejected},
            auth=allowed(ADMIN, scope=Scope.WRITE),
            operation_id=f"start_{kind}",
        )(_operation(kind))


add_operations()
