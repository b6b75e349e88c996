"""The API's OpenAPI schema is valid OpenAPI (checked by openapi-spec-validator), versioned, and says
every operation needs a bearer token."""

from __future__ import annotations

import pytest
from openapi_spec_validator import validate


@pytest.mark.django_db
def test_the_schema_served_is_valid_openapi_and_every_operation_needs_a_token(client, viewer):
    client.force_login(viewer)
    schema = client.get("/api/v1/openapi.json").json()
    validate(schema)
    assert schema["info"]["version"] == "1"
    operations = [op for methods in schema["paths"].values() for op in methods.values()]
    assert operations and all(op.get("security") == [{"PersonalToken": []}] for op in operations)
    assert all(path.startswith("/api/v1/") for path in schema["paths"])
