from __future__ import annotations

from django.db import migrations


def add_builtins(apps, schema_editor):
    from evalhub.core.generation_templates import BUILTIN_TEMPLATES

    template = apps.get_model("generation", "PromptTemplate")
    for builtin in BUILTIN_TEMPLATES:
        template.objects.update_or_create(
            slug=builtin.slug,
            defaults={"name": builtin.name, "system": builtin.system, "user": builtin.user,
                      "description": builtin.description, "builtin": True},
        )


class Migration(migrations.Migration):
    dependencies = [("generation", "0001_initial")]
    operations = [migrations.RunPython(add_builtins, migrations.RunPython.noop)]
