from __future__ import annotations

from django.conf import settings
from django.contrib import admin
from django.contrib.auth.decorators import login_not_required
from django.urls import include, path
from django.views.generic import RedirectView

from evalhub.api.v1 import urls as api_v1_urls

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
    path("judge-versions/", include("evalhub.alignment.urls")),
    path("adjudicate/", include("evalhub.adjudication.urls")),
    path("surveys/", include("evalhub.surveys.urls")),
    path("admin/", admin.site.urls),
    path("api/v1/", api_v1_urls()),
    # Asked for by browsers and feed readers whatever the page says (a download, a plain-text answer).
    path(
        "favicon.ico",
        login_not_required(RedirectView.as_view(url=f"{settings.STATIC_URL}favicon.svg", permanent=True)),
    ),
]
