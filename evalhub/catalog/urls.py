from __future__ import annotations

from django.urls import path

from evalhub.catalog import views

urlpatterns = [
    path("benchmarks/", views.benchmark_list, name="benchmark_list"),
    path("benchmarks/import/", views.import_benchmark, name="import_benchmark"),
    path("benchmarks/<slug:slug>/", views.benchmark_detail, name="benchmark_detail"),
    path("benchmarks/<slug:slug>/split/", views.benchmark_split, name="benchmark_split"),
    path("benchmarks/<slug:slug>/prompts/<int:pk>/", views.prompt_detail, name="prompt_detail"),
    path("benchmarks/<slug:slug>/export/<str:table>.<str:fmt>", views.export_table, name="export_table"),
    path("models/", views.model_list, name="model_list"),
]
