"""Changes the counts cannot follow one by one mark them for a rebuild.

A deletion (an admin's cleanup: a debate run, a benchmark, a judge run) or a renamed slug changes
what many counted rows stand for. Rather than subtract each (a cascade can reach thousands of
rows), the counts are marked stale in the same transaction and rebuilt before they are next read.
The apps name their models here in AppConfig.ready; this app imports none of them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

from django.db import models
from django.db.models.signals import pre_delete, pre_save

from evalhub.tallies.actions import do_mark_stale

_counted_by_caller: ContextVar[bool] = ContextVar("tallies_counted_by_caller", default=False)


@contextmanager
def deletions_counted() -> Iterator[None]:
    """Deletions inside this block were taken away from the counts by the caller already."""
    token = _counted_by_caller.set(True)
    try:
        yield
    finally:
        _counted_by_caller.reset(token)


def watch_deletions(*watched: type[models.Model]) -> None:
    for model in watched:
        pre_delete.connect(_deleted, sender=model, weak=False, dispatch_uid=f"tallies-delete-{model._meta.label}")


def watch_changes(model: type[models.Model], fields: Sequence[str]) -> None:
    """Mark the counts stale when a saved row changes one of `fields` (attribute names: `criterion_id`)."""

    # A save naming the fields it writes may leave every watched one alone: it costs no read then.
    names = {name for field in fields for name in (field, model._meta.get_field(field).name)}

    def saved(sender, instance, raw: bool = False, update_fields: frozenset[str] | None = None, **kwargs) -> None:
        if raw or instance._state.adding or instance.pk is None:
            return
        if update_fields is not None and names.isdisjoint(update_fields):
            return
        before = sender.objects.filter(pk=instance.pk).values(*fields).first()
        if before is not None and any(before[field] != getattr(instance, field) for field in fields):
            do_mark_stale()

    pre_save.connect(saved, sender=model, weak=False, dispatch_uid=f"tallies-change-{model._meta.label}")


def _deleted(sender, **kwargs) -> None:
    if not _counted_by_caller.get():
        do_mark_stale()
