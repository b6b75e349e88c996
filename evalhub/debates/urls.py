from __future__ import annotations

from django.urls import path

from evalhub.debates import views

urlpatterns = [
    path("", views.debate_index, name="debate_index"),
    path("new/", views.run_create, name="debate_run_create"),
    path("runs/<int:pk>/", views.run_detail, name="debate_run_detail"),
    path("runs/<int:pk>/judges/", views.run_judges, name="debate_run_judges"),
    path("runs/<int:pk>/results/", views.run_results, name="debate_run_results"),
    path("judge-runs/<int:pk>/results/", views.judge_run_results, name="debate_judge_run_results"),
    path("runs/<int:pk>/<str:action>/", views.run_control, name="debate_run_control"),
    path("<int:pk>/", views.debate_detail, name="debate_detail"),
]
