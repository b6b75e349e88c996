"""Debate runs become jobs: each started run gets a job carrying its state and usage."""

from django.db import migrations, models
from django.utils import timezone

FINISHED = ("consensus", "unresolved", "adjudicated")


def runs_to_jobs(apps, schema_editor):
    DebateRun = apps.get_model("debates", "DebateRun")
    Job = apps.get_model("jobs", "Job")
    JobChunk = apps.get_model("jobs", "JobChunk")
    db = schema_editor.connection.alias  # the database being migrated (tests migrate two)
    for run in DebateRun.objects.using(db).exclude(status="draft"):
        ids = list(run.debates.order_by("id").values_list("id", flat=True))
        statuses = list(run.debates.values_list("status", flat=True))
        failed = statuses.count("failed")
        done = sum(s in FINISHED for s in statuses)
        if run.status == "cancelled":
            state = "cancelled"
        elif done + failed == len(statuses):
            state = "partial" if failed else "succeeded"
        else:
            state = "paused"  # unfinished: Resume runs the rest
        job = Job.objects.using(db).create(
            kind="debate",
            title=f"Debates: {run.name}"[:200],
            status=state,
            progress_total=len(ids),
            progress_done=done + failed,
            units_failed=failed,
            usage={k: v for k, v in (run.usage or {}).items() if k != "latency_s"},
            created_by_id=run.created_by_id,
            finished_at=timezone.now() if state in ("cancelled", "succeeded", "partial") else None,
            message="Carried over from before debate runs were jobs.",
        )
        for index, start in enumerate(range(0, len(ids), 25)):
            part = ids[start : start + 25]
            part_failed = run.debates.filter(id__in=part, status="failed").count()
            unfinished = run.debates.filter(id__in=part).exclude(status__in=FINISHED + ("failed",)).exists()
            JobChunk.objects.using(db).create(
                job=job,
                index=index,
                unit_ids=part,
                units_planned=len(part),
                units_failed=part_failed,
                done_at=None if unfinished else timezone.now(),
            )
        run.job = job
        run.save(using=db, update_fields=["job"])


class Migration(migrations.Migration):
    dependencies = [("debates", "0004_debaterun_variant"), ("jobs", "0003_unified_pipeline")]

    operations = [
        migrations.AddField(
            model_name="debaterun",
            name="job",
            field=models.OneToOneField(
                blank=True,
                null=True,
                on_delete=models.deletion.SET_NULL,
                related_name="debate_run",
                to="jobs.job",
            ),
        ),
        migrations.RunPython(runs_to_jobs, migrations.RunPython.noop),
        migrations.RemoveField(model_name="debaterun", name="status"),
        migrations.RemoveField(model_name="debaterun", name="usage"),
    ]
