from __future__ import annotations

from django.urls import path

from evalhub.adjudication import rating, views

urlpatterns = [
    path("", views.queue, name="adjudication_queue"),
    path("start/", views.start, name="adjudication_start"),
    path("items/<int:pk>/", views.screen, name="adjudication_screen"),
    path("items/<int:pk>/submit/", views.submit, name="adjudication_submit"),
    path("items/<int:pk>/skip/", views.skip, name="adjudication_skip"),
    path("items/<int:pk>/extend/", views.extend, name="adjudication_extend"),
    path("items/<int:pk>/review/", views.review, name="adjudication_review"),
    path("all/", views.overview, name="adjudication_overview"),
    path("runs/<int:run_pk>/agreement/", views.agreement, name="adjudication_agreement"),
    path("runs/<int:run_pk>/export.<str:fmt>", views.export, name="adjudication_export"),
    path("rate/", rating.rate_choose, name="rate_choose"),
    path("rate/<slug:benchmark>/<slug:criterion>/", rating.rate_screen, name="rate_screen"),
    path("rate/<slug:benchmark>/<slug:criterion>/submit/", rating.rate_submit, name="rate_submit"),
    path("rate/<slug:benchmark>/<slug:criterion>/skip/", rating.rate_skip, name="rate_skip"),
]
