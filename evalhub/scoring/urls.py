from __future__ import annotations

from django.urls import path

from evalhub.scoring import views

urlpatterns = [
    path("gem/new/", views.gem_create, name="gem_create"),
    path("gem/<int:pk>/results/", views.gem_results, name="gem_results"),
    path("gem/<int:pk>/<str:what>.<str:fmt>", views.gem_export, name="gem_export"),
    path("discernment/new/", views.discernment_create, name="discernment_create"),
    path("discernment/<int:pk>/results/", views.discernment_results, name="discernment_results"),
    path("discernment/<int:pk>/<str:what>.<str:fmt>", views.discernment_export, name="discernment_export"),
]
