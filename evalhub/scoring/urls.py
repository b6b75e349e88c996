from __future__ import annotations

from django.urls import path, re_path

from evalhub.scoring import views

urlpatterns = [
    path("gem/new/", views.gem_create, name="gem_create"),
    path("gem/<int:pk>/results/", views.gem_results, name="gem_results"),
    re_path(
        r"^gem/(?P<pk>\d+)/(?P<what>table|responses|grades)\.(?P<fmt>csv|json|hf)$", views.gem_export, name="gem_export"
    ),
    path("discernment/new/", views.discernment_create, name="discernment_create"),
    path("discernment/<int:pk>/results/", views.discernment_results, name="discernment_results"),
    re_path(
        r"^discernment/(?P<pk>\d+)/(?P<what>scores|report)\.(?P<fmt>csv|json|hf)$",
        views.discernment_export,
        name="discernment_export",
    ),
]
