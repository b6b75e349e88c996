from __future__ import annotations

from django.urls import path, re_path

from evalhub.judgelab import views

urlpatterns = [
    path("judges/", views.judge_list, name="judge_list"),
    re_path(r"^judges/report\.(?P<fmt>csv|json|hf)$", views.report_export, name="judge_report_export"),
    path("judges/import/", views.import_judgments, name="import_judgments"),
    path("judges/import-scores/", views.import_scores, name="import_scores"),
    path("judges/model/<slug:slug>/", views.model_section, name="judge_model_section"),
    path("judges/corrected-boards/", views.corrected_boards, name="judge_corrected_boards"),
    re_path(
        r"^judges/corrected-boards\.(?P<fmt>csv|json)$", views.corrected_boards, name="judge_corrected_boards_export"
    ),
    path("judges/pointwise/", views.pointwise, name="judge_pointwise"),
    re_path(r"^judges/pointwise\.(?P<fmt>csv|json)$", views.pointwise, name="judge_pointwise_export"),
    path("judges/graded/", views.graded, name="judge_graded"),
    re_path(r"^judges/graded\.(?P<fmt>csv)$", views.graded, name="judge_graded_export"),
    path("judges/<str:key>/", views.judge_detail, name="judge_detail"),
    re_path(r"^judges/(?P<key>[0-9a-f]{12})\.(?P<fmt>csv|json)$", views.judge_export, name="judge_export"),
]
