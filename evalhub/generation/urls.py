from __future__ import annotations

from django.urls import path, re_path

from evalhub.generation import views

urlpatterns = [
    path("", views.index, name="generation_index"),
    path("new/", views.run_create, name="generation_create"),
    path("<int:pk>/results/", views.results, name="generation_results"),
    path("<int:pk>/compare/", views.compare, name="generation_compare"),
    re_path(r"^(?P<pk>\d+)/(?P<what>responses|tiers)\.(?P<fmt>csv|json|hf)$", views.export, name="generation_export"),
    path("templates/", views.templates, name="generation_templates"),
    path("hints/<slug:slug>/", views.hints, name="generation_hints"),
    path("hints/edit/<int:pk>/", views.hints_edit, name="generation_hints_edit"),
]
