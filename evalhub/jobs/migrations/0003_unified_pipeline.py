from django.db import migrations, models


def cancel_flag_to_request(apps, schema_editor):
    Job = apps.get_model("jobs", "Job")
    Job.objects.using(schema_editor.connection.alias).filter(cancel_requested=True).exclude(status__in=["succeeded", "failed", "cancelled"]).update(
        requested="cancel"
    )


class Migration(migrations.Migration):
    dependencies = [("jobs", "0002_jobchunk")]

    operations = [
        migrations.RenameField("jobchunk", "prompt_ids", "unit_ids"),
        migrations.AlterField(
            "jobchunk",
            "unit_ids",
            models.JSONField(help_text="The ids this chunk works on: prompts, or debates for a debate run."),
        ),
        migrations.AddField(
            "jobchunk", "units_failed", models.PositiveIntegerField(default=0)
        ),
        migrations.AddField(
            "jobchunk",
            "worker",
            models.CharField(blank=True, default="", help_text="host:pid of the worker on it now.", max_length=200),
            preserve_default=False,
        ),
        migrations.AddField("jobchunk", "heartbeat_at", models.DateTimeField(blank=True, null=True)),
        migrations.AddField(
            "jobchunk",
            "first_error",
            models.CharField(blank=True, default="", help_text="The cause of its first failed unit.", max_length=1000),
            preserve_default=False,
        ),
        migrations.AddField(
            "job",
            "requested",
            models.CharField(
                blank=True,
                choices=[("", "—"), ("pause", "Pause"), ("cancel", "Cancel")],
                default="",
                help_text="A pause or cancel asked for.",
                max_length=10,
            ),
        ),
        migrations.RunPython(cancel_flag_to_request, migrations.RunPython.noop),
        migrations.RemoveField("job", "cancel_requested"),
        migrations.AddField(
            "job",
            "units_failed",
            models.PositiveIntegerField(default=0, help_text="Units that produced no result (with a cause)."),
        ),
        migrations.AddField(
            "job", "units_invalid", models.PositiveIntegerField(default=0, help_text="Units answered, but not usable.")
        ),
        migrations.AddField(
            "job",
            "usage",
            models.JSONField(blank=True, default=dict, help_text="Calls, tokens and cost (evalhub.core.runs.usage.Usage)."),
        ),
        migrations.AlterField(
            "job",
            "status",
            models.CharField(
                choices=[
                    ("queued", "Queued"),
                    ("running", "Running"),
                    ("paused", "Paused"),
                    ("succeeded", "Succeeded"),
                    ("partial", "Finished with failures"),
                    ("failed", "Failed"),
                    ("cancelled", "Cancelled"),
                ],
                default="queued",
                max_length=20,
            ),
        ),
    ]
