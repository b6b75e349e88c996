from __future__ import annotations

from django.contrib.auth import views as auth_views
from django.urls import path

from evalhub.accounts import views

urlpatterns = [
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("profile/", views.profile, name="profile"),
    path("profile/tokens/", views.create_token, name="create_token"),
    path("profile/tokens/<int:pk>/revoke/", views.revoke_token, name="revoke_token"),
]
