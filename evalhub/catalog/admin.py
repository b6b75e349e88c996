from __future__ import annotations

from django.contrib import admin

from evalhub.catalog.label_counts import do_count_imported
from evalhub.catalog.models import Benchmark, Criterion, DataImport, Judgment, LanguageModel, Prompt, Response
from evalhub.tallies.admin_edits import EditsSeenByBoards


@admin.register(LanguageModel)
class LanguageModelAdmin(EditsSeenByBoards):
    list_display = ("slug", "display_name", "is_human", "provider", "model_id", "family", "parameter_count")
    list_filter = ("is_human", "provider", "family")
    search_fields = ("slug", "display_name", "model_id")


@admin.register(Benchmark)
class BenchmarkAdmin(EditsSeenByBoards):
    list_display = ("slug", "name", "task_type", "created_at")
    list_filter = ("task_type",)
    search_fields = ("slug", "name")


@admin.register(Prompt)
class PromptAdmin(EditsSeenByBoards):
    list_display = ("external_id", "benchmark", "category")
    list_filter = ("benchmark", "category")
    search_fields = ("external_id", "text")
    list_select_related = ("benchmark",)


@admin.register(Response)
class ResponseAdmin(EditsSeenByBoards):
    list_display = ("id", "prompt", "model", "variant", "perturbation", "perturbation_level", "perturbation_severity")
    list_filter = ("model", "perturbation_level", "perturbation")
    search_fields = ("text", "prompt__external_id")
    list_select_related = ("prompt__benchmark", "model")
    raw_id_fields = ("prompt", "parent")


@admin.register(Criterion)
class CriterionAdmin(EditsSeenByBoards):
    list_display = ("slug", "name", "scenario", "builtin")
    search_fields = ("slug", "name")


@admin.register(Judgment)
class JudgmentAdmin(EditsSeenByBoards):
    list_display = ("id", "criterion", "judge_model", "judge_user", "score", "verdict", "source", "created_at")
    list_filter = ("source", "criterion", "judge_model")
    raw_id_fields = ("response", "response_2")
    list_select_related = ("criterion", "judge_model", "judge_user")

    def take_back(self, obj: Judgment) -> None:  # a pairwise label is a battle in the counts
        do_count_imported([obj.pk], -1)

    def count(self, obj: Judgment) -> None:
        do_count_imported([obj.pk], 1)


@admin.register(DataImport)
class DataImportAdmin(admin.ModelAdmin):
    list_display = ("benchmark", "filename", "rows", "imported_by", "created_at")
    readonly_fields = ("benchmark", "filename", "sha256", "rows", "counts", "imported_by", "created_at")
