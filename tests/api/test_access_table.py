"""Every operation in the API's schema, called by every role with every scope of token and with none:
no token is 401; a token whose scope or person's roles fall short is 403; the rest get through. The
table is the schema's (a new operation without an example or an access declaration fails here)."""

from __future__ import annotations

import pytest

from evalhub.accounts.actions import do_create_token
from evalhub.accounts.models import SCOPE_RANK, Scope
from evalhub.accounts.roles import ALL_ROLES
from evalhub.api.access import declared
from evalhub.api.v1 import api
from evalhub.jobs.models import Job
from tests.conftest import make_user

PERSONAS = {"admin": ("admin",), "viewer": ("viewer",), "expert": ("expert",), "adjudicator": ("adjudicator",)}
PERSONAS["outsider"] = ()


@pytest.fixture
def tokens(db):
    """persona → scope → the token's text (an outsider's and an adjudicator's too: a token never adds a role)."""
    made = {}
    for persona, roles in PERSONAS.items():
        user = make_user(f"{persona}-api", *roles)
        scopes = [Scope.READ, Scope.WRITE] + ([Scope.ADMIN] if "admin" in roles else [])
        made[persona] = {scope: do_create_token(user, f"{persona} {scope}", scope, 30)[1] for scope in scopes}
    return made


def _operations():
    schema = api.get_openapi_schema()
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation["operationId"]


# Values for each operation's parameters (a job is made by the fixture; a missing benchmark is a 404,
# which still says the call got through the access check).
EXAMPLES = {
    "job_id": "{job}",
    "benchmark": "demo",
    "judge": "heuristic",
    "baseline": "demo-quick",
}


def _call(client, path: str, method: str, job: Job, token: str | None):
    url = path.replace("{job_id}", str(job.pk)).replace("{name}", "some-judge").replace("{slug}", "demo")
    url = url.replace("{table}", "responses").replace("{run_id}", "1").replace("{upload_id}", "1")
    query = {}
    for name, value in EXAMPLES.items():
        if "{" + name + "}" not in path and name != "job_id":
            query[name] = value
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    if method == "get":
        return client.get(url, query, headers=headers)
    return client.post(url, headers=headers)


def test_every_operation_declares_who_may_call_it():
    access = declared(api)
    for path, method, operation_id in _operations():
        assert operation_id in access, f"{method.upper()} {path} declares no access"


@pytest.mark.django_db
def test_the_route_by_role_by_scope_table(client, tokens, admin_user):
    job = Job.objects.create(kind="nobody", title="a job", created_by=admin_user)
    seen = 0
    for path, method, operation_id in _operations():
        access = declared(api)[operation_id]
        assert _call(client, path, method, job, None).status_code == 401, f"{method} {path} without a token"
        assert _call(client, path, method, job, "evh_000000000000_" + "x" * 43).status_code == 401
        for persona, by_scope in tokens.items():
            for scope, token in by_scope.items():
                status = _call(client, path, method, job, token).status_code
                may = set(PERSONAS[persona]) & set(access.roles) and SCOPE_RANK[scope] >= SCOPE_RANK[access.scope]
                # Stopping another's job is the job page's rule too: only an admin, or its starter.
                if may and path.endswith(("/pause", "/cancel")) and persona != "admin":
                    may = False
                assert (status == 403) == (not may), f"{persona} {scope}: {method.upper()} {path} → {status}"
                assert status != 401 and status < 500, f"{persona} {scope}: {method.upper()} {path} → {status}"
                seen += 1
    assert seen >= 10 * (len(ALL_ROLES) + 1)
