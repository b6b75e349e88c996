from django.db import migrations, models
from django.db.models import Count, Max


def keep_the_latest_of_each_score(apps, schema_editor):
    """Two score imports that ran at once could each store the same score (nothing refused the second):
    of each (criterion, rater, response, prompt variant) the last one written stays, as a re-import
    would have updated it in place."""
    Judgment = apps.get_model("catalog", "Judgment")
    scores = Judgment.objects.filter(judge_model__isnull=False, response_2__isnull=True)
    repeated = (
        scores.values("criterion_id", "judge_model_id", "response_id", "prompt_variant")
        .annotate(rows=Count("id"), latest=Max("id"))
        .filter(rows__gt=1)
    )
    for key in repeated.iterator():
        latest = key.pop("latest")
        key.pop("rows")
        scores.filter(**key).exclude(id=latest).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("catalog", "0010_label_split"),
    ]

    operations = [
        migrations.RunPython(keep_the_latest_of_each_score, migrations.RunPython.noop, elidable=True),
        migrations.AddConstraint(
            model_name="judgment",
            constraint=models.UniqueConstraint(
                condition=models.Q(("judge_model__isnull", False), ("response_2__isnull", True)),
                fields=("criterion", "judge_model", "response", "prompt_variant"),
                name="one_score_per_model_judge_and_response",
            ),
        ),
    ]
