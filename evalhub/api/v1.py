"""evalhub's HTTP API, version 1, at /api/v1/ (django-ninja: typed operations whose OpenAPI schema is
generated from the same signatures that validate each call; docs/api.md says why this library).

Every call carries a personal token (`Authorization: Bearer evh_…`, made on the profile page); it acts
as its person, within its scope, under the same role rules as the pages (`evalhub.api.access`), and is
throttled per token. The schema is at /api/v1/openapi.json and rendered at /api/v1/docs for a signed-in
person."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_not_required, login_required
from django.urls import URLPattern
from ninja import NinjaAPI, Schema
from ninja.throttling import AuthRateThrottle

from evalhub.accounts.roles import ALL_ROLES, roles_of
from evalhub.api import figures, imports, jobs, runs
from evalhub.api.access import allowed
from evalhub.api.auth import TokenAuth

api = NinjaAPI(
    title="evalhub",
    version="1",
    description="Evaluate LLMs and the LLMs that judge them: jobs, win rates and the judge lab, from code.",
    urls_namespace="api-v1",
    auth=TokenAuth(),
    throttle=[AuthRateThrottle(f"{settings.EVALHUB_API_CALLS_PER_MINUTE}/m")],
    docs_decorator=login_required,
)
api.add_router("/", jobs.router)
api.add_router("/", figures.router)
api.add_router("/", imports.router)
api.add_router("/", runs.router)


class MeOut(Schema):
    username: str
    roles: list[str]
    token: str  # the token's name
    scope: str


@api.get("/me", response=MeOut, tags=["account"], auth=allowed(*ALL_ROLES))
def me(request):
    """Who the token acts as, with which roles and scope: what a pipeline checks first."""
    held = roles_of(request.user)
    roles = [role for role in ALL_ROLES if role in held]
    return MeOut(username=request.user.get_username(), roles=roles, token=request.auth.name, scope=request.auth.scope)


# The schema and its rendering are pages for a signed-in person; every operation authenticates by token
# alone (the site's LoginRequiredMiddleware would send a pipeline to the sign-in page).
SIGNED_IN = ("openapi-json", "openapi-view", "api-root")


def urls() -> tuple[list, str, str]:
    patterns, app_name, namespace = api.urls
    for pattern in patterns:
        if isinstance(pattern, URLPattern) and pattern.name not in SIGNED_IN:
            login_not_required(pattern.callback)
    return patterns, app_name, namespace
