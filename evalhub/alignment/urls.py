from __future__ import annotations

from django.urls import path, re_path

from evalhub.alignment import views

urlpatterns = [
    path("", views.version_list, name="judge_version_list"),
    path("new/", views.create_judge, name="create_judge"),
    path("<slug:name>/", views.judge_versions, name="judge_versions"),
    path("<slug:name>/compare/", views.compare_versions_page, name="compare_judge_versions"),
    re_path(r"^(?P<name>[-a-zA-Z0-9_]+)\.(?P<fmt>json)$", views.judge_versions, name="judge_versions_export"),
    path("<slug:name>/derive/", views.derive_version, name="derive_judge_version"),
    path("<slug:name>/v<int:number>/run/", views.run_version, name="run_judge_version"),
    path("<slug:name>/v<int:number>/improve/", views.improve_version, name="improve_judge_version"),
    path("<slug:name>/v<int:number>/settings/", views.search_settings, name="search_judge_settings"),
    path("<slug:name>/v<int:number>/rewrite/", views.rewrite_instructions, name="rewrite_judge_instructions"),
    path("<slug:name>/v<int:number>/reasons/", views.distil_reasons, name="distil_judge_reasons"),
]
