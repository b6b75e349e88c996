from __future__ import annotations

from django.contrib import admin

from evalhub.generation.models import GenerationRun, PromptHints, PromptTemplate


@admin.register(PromptTemplate)
class PromptTemplateAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "builtin"]
    search_fields = ["slug", "name"]


@admin.register(PromptHints)
class PromptHintsAdmin(admin.ModelAdmin):
    list_display = ["prompt", "maker", "final_answer", "leaks", "leak_accepted", "edited_by"]
    list_filter = ["leak_accepted", "maker"]
    raw_id_fields = ["prompt"]
    readonly_fields = ["leaks", "edited_by", "edited_at"]

    def save_model(self, request, obj, form, change):
        # The same re-check as the hints page: an edit can never hide a leak.
        from evalhub.core.privileged.hints import leaking_hints

        obj.leaks = [i + 1 for i in leaking_hints(obj.hints, obj.final_answer or None)]
        obj.leak_accepted = obj.leak_accepted and bool(obj.leaks)
        obj.edited_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(GenerationRun)
class GenerationRunAdmin(admin.ModelAdmin):
    list_display = ["pk", "benchmark", "template", "tiers", "made", "found", "cost_usd"]
    readonly_fields = [f.name for f in GenerationRun._meta.fields]
