from __future__ import annotations

from django.contrib import admin

from evalhub.jobs.models import Job, WorkerHeartbeat


class HeartbeatInline(admin.TabularInline):
    model = WorkerHeartbeat
    extra = 0
    readonly_fields = ("queue", "hostname", "pid", "torch_version", "cuda_available", "device_name", "latency_ms")


@admin.register(Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ("id", "kind", "title", "status", "progress_done", "progress_total", "created_by", "created_at")
    list_filter = ("kind", "status")
    inlines = [HeartbeatInline]
