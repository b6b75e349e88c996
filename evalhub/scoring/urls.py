from __future__ import annotations

from django.urls import path

from evalhub.scoring import views

urlpatterns = [
    path("gem/new/", views.gem_create, name="gem_create"),
    path("gem/<int:pk>/results/", views.gem_results, name="gem_results"),
    path("gem/<int:pk>/resume/", views.gem_resume, name="gem_resume"),
    path("gem/<int:pk>/<str:what>.<str:fmt>", views.gem_export, name="gem_export"),
]
