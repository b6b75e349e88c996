from __future__ import annotations

from django.contrib import admin

from evalhub.jobs.models import Job, WorkerHeartbeat
from evalhub.system.admin_inlines import ShownInline


class HeartbeatInline(ShownInline):  # the workers' to write
    model = WorkerHeartbeat
    readonly_fields = ("queue", "hostname", "pid", "torch_version", "cuda_available", "device_name", "latency_ms")


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "title", "status", "progress_done", "progress_total", "created_by", "created_at")
    list_filter = ("kind", "status")
    inlines = [HeartbeatInline]
    # A job's state is derived from its stored outcomes and changed by its operations (pause, resume,
    # cancel, retry); its results are its runner's. A form that set "succeeded" or a result would show
    # figures nothing computed. Its title is the one thing a person names.
    readonly_fields = [field.name for field in Job._meta.concrete_fields if field.name not in ("id", "title")]
