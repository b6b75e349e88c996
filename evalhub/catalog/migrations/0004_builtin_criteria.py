"""The built-in criteria exist on every database, not only after the demo: a labels file naming
`helpfulness` imports on an instance made by `migrate` alone (production, `quickstart --no-demo`).
A criterion someone already has under one of these slugs is left as it is."""

from django.db import migrations


def create_builtin_criteria(apps, schema_editor):
    from evalhub.core.prompts.builtin_criteria import BUILTIN_CRITERIA

    Criterion = apps.get_model("catalog", "Criterion")
    for slug, spec in BUILTIN_CRITERIA.items():
        Criterion.objects.using(schema_editor.connection.alias).get_or_create(
            slug=slug,
            defaults={
                "name": spec["name"],
                "definition": spec["definition"],
                "levels": dict(spec["levels"]),
                "scenario": spec["scenario"],
                "builtin": True,
            },
        )


class Migration(migrations.Migration):
    dependencies = [("catalog", "0003_pairwise_judgment_labels")]

    # Nothing to undo: the criteria may be in use by then.
    operations = [migrations.RunPython(create_builtin_criteria, migrations.RunPython.noop)]
