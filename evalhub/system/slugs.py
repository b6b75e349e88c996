"""Slugs guaranteed by the database, and the repair that makes existing rows meet the guarantee."""

from __future__ import annotations

from django.db.models import CheckConstraint, Q

from evalhub.core.files.slugs import SLUG_CHARACTERS, repaired_slugs


def slug_constraint(model: str) -> CheckConstraint:
    """`slug` is non-empty and holds slug characters only, on PostgreSQL and SQLite alike (a negated
    character class, because the two databases' regex dialects disagree on `$` and `\\Z`)."""
    return CheckConstraint(
        condition=~Q(slug="") & ~Q(slug__regex=f"[^{SLUG_CHARACTERS}]"), name=f"{model}_slug_is_a_slug"
    )


def repair_slugs(app_label: str, model: str):
    """A migration operation's function: rewrite every invalid slug of one model to a valid unique one."""

    def repair(apps, schema_editor) -> None:
        Model = apps.get_model(app_label, model)
        rows = Model.objects.using(schema_editor.connection.alias)
        for old, new in repaired_slugs(rows.values_list("slug", flat=True)).items():
            rows.filter(slug=old).update(slug=new)

    return repair
