from __future__ import annotations

from django.urls import path

from evalhub.surveys import views

urlpatterns = [
    path("", views.survey_list, name="survey_list"),
    path("new/", views.create_from_template, name="survey_create"),
    path("manage/<slug:slug>/", views.manage, name="survey_manage"),
    path("manage/<slug:slug>/v<int:number>/", views.results, name="survey_results"),
    path("manage/<slug:slug>/v<int:number>/<str:kind>", views.export, name="survey_export"),
    path("fill/<slug:slug>/v<int:number>/", views.fill_as_expert, name="survey_fill_as_expert"),
    path("<str:token>/", views.fill, name="survey_fill"),
]
