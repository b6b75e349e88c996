from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

urlpatterns = [
    path("", include("evalhub.home.urls")),
    path("", include("evalhub.accounts.urls")),
    path("", include("evalhub.catalog.urls")),
    path("jobs/", include("evalhub.jobs.urls")),
    path("scoring/", include("evalhub.scoring.urls")),
    path("generation/", include("evalhub.generation.urls")),
    path("debates/", include("evalhub.debates.urls")),
    path("", include("evalhub.dashboards.urls")),
    path("", include("evalhub.judgelab.urls")),
    path("adjudicate/", include("evalhub.adjudication.urls")),
    path("surveys/", include("evalhub.surveys.urls")),
    path("admin/", admin.site.urls),
]
