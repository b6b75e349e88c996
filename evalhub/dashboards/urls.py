from __future__ import annotations

from django.urls import path, re_path

from evalhub.dashboards import views

urlpatterns = [
    path("leaderboards/", views.leaderboards, name="leaderboards"),
    re_path(
        r"^leaderboards/(?P<table>ratings|win_rates|gre_bench|judges)\.(?P<fmt>csv|json|hf)$",
        views.leaderboard_export,
        name="leaderboard_export",
    ),
    re_path(r"^leaderboards/battles\.(?P<fmt>jsonl|hf)$", views.battles_export, name="battles_export"),
    path("leaderboards/baseline/", views.baseline_win_rates, name="baseline_win_rates"),
    path("leaderboards/baseline/ask-people/", views.ask_people, name="baseline_ask_people"),
    path("leaderboards/baseline/ask-until/", views.ask_until, name="baseline_ask_until"),
    re_path(
        r"^leaderboards/baseline\.(?P<fmt>csv|json|hf)$",
        views.baseline_win_rates_export,
        name="baseline_win_rates_export",
    ),
    path("models/<slug:slug>/", views.model_detail, name="model_detail"),
    re_path(
        r"^models/(?P<slug>[-\w]+)/(?P<table>record|by_criterion|by_scenario|gre_bench)\.(?P<fmt>csv|json|hf)$",
        views.model_export,
        name="model_export",
    ),
]
