from __future__ import annotations

from django.urls import path

from evalhub.jobs import views

urlpatterns = [
    path("", views.job_list, name="job_list"),
    path("usage.<str:fmt>", views.usage_export, name="job_usage_export"),
    path("worker-check/", views.start_worker_check, name="start_worker_check"),
    path("<int:pk>/", views.job_detail, name="job_detail"),
    path("<int:pk>/controls/", views.job_controls, name="job_controls"),
    path("<int:pk>/check/", views.check_job, name="check_job"),
    path("<int:pk>/cancel/", views.cancel_job, name="cancel_job"),
    path("<int:pk>/pause/", views.stop_job, {"what": "pause"}, name="pause_job"),
    path("<int:pk>/resume/", views.resume_job, name="resume_job"),
]
