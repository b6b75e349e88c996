"""Personal API tokens: made on the profile page and shown once, stored as a digest, scoped, expiring,
revocable, throttled per token, never written to the database or a log."""

from __future__ import annotations

import logging
from datetime import timedelta

import pytest
from django.test import override_settings
from django.utils import timezone

from evalhub.accounts.actions import TokenRejected, do_create_token, do_revoke_token
from evalhub.accounts.models import ApiToken
from tests.conftest import make_user


def _me(client, text: str):
    return client.get("/api/v1/me", headers={"Authorization": f"Bearer {text}"})


@pytest.mark.django_db
def test_a_token_made_on_the_profile_page_is_shown_once_and_stored_only_as_its_digest(client, viewer, caplog):
    client.force_login(viewer)
    with caplog.at_level(logging.DEBUG):
        made = client.post("/profile/tokens/", {"name": "CI", "scope": "read", "days": "30"})
    assert made.status_code == 200
    text = made.context["made"]
    assert text.startswith("evh_") and text in made.content.decode()
    token = ApiToken.objects.get()
    stored = " ".join(str(value) for value in ApiToken.objects.values_list().get())
    secret = text[len("evh_") + 13 :]
    assert secret not in stored and text not in stored
    assert secret not in caplog.text
    assert token.prefix in text and (token.expires_at - timezone.now()).days in (29, 30)
    again = client.get("/profile/")
    assert text not in again.content.decode() and f"evh_{token.prefix}_…" in again.content.decode()
    assert _me(client, text).json() == {
        "username": viewer.username,
        "roles": ["viewer"],
        "token": "CI",
        "scope": "read",
    }


@pytest.mark.django_db
def test_a_revoked_an_expired_or_a_wrong_token_is_401_alike(client, viewer):
    token, text = do_create_token(viewer, "CI", "read", 30)
    assert _me(client, text).status_code == 200
    wrong = text[:-1] + ("A" if text[-1] != "A" else "B")
    assert _me(client, wrong).status_code == 401
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert _me(client, text).status_code == 401
    ApiToken.objects.filter(pk=token.pk).update(expires_at=None)
    assert _me(client, text).status_code == 200
    do_revoke_token(token, viewer)
    assert _me(client, text).status_code == 401
    viewer.is_active = False
    viewer.save()
    assert _me(client, do_create_token(make_user("other", "viewer"), "x", "read", None)[1]).status_code == 200


@pytest.mark.django_db
def test_a_session_never_authenticates_an_api_call(client, admin_user):
    client.force_login(admin_user)
    assert client.get("/api/v1/me").status_code == 401
    assert client.get("/api/v1/openapi.json").status_code == 200  # the schema is a page for signed-in people


@pytest.mark.django_db
def test_the_schema_and_its_rendering_need_a_signed_in_person(client):
    assert client.get("/api/v1/openapi.json").status_code == 302
    assert client.get("/api/v1/docs").status_code == 302


@pytest.mark.django_db
def test_only_an_admin_makes_an_admin_token_and_expiry_is_bounded(viewer, admin_user):
    with pytest.raises(TokenRejected, match="Only an admin may make an admin token"):
        do_create_token(viewer, "x", "admin", 30)
    with pytest.raises(TokenRejected, match="expires within 1 to 366 days"):
        do_create_token(admin_user, "x", "admin", 400)
    assert do_create_token(admin_user, "x", "admin", None)[0].expires_at is None


@pytest.mark.django_db
def test_a_person_revokes_only_their_own_tokens(client, viewer, admin_user):
    token, _ = do_create_token(admin_user, "admin's", "read", 30)
    client.force_login(viewer)
    assert client.post(f"/profile/tokens/{token.pk}/revoke/").status_code == 404
    token.refresh_from_db()
    assert token.revoked_at is None


@pytest.mark.django_db
def test_last_used_is_noted_once_a_minute_not_once_a_call(client, viewer, django_assert_max_num_queries):
    token, text = do_create_token(viewer, "CI", "read", 30)
    assert _me(client, text).status_code == 200
    token.refresh_from_db()
    first = token.last_used_at
    assert first is not None
    assert _me(client, text).status_code == 200
    token.refresh_from_db()
    assert token.last_used_at == first


@pytest.mark.django_db
def test_each_token_is_throttled_on_its_own(client, viewer):
    from evalhub.api.v1 import api

    _, first = do_create_token(viewer, "first", "read", 30)
    _, second = do_create_token(viewer, "second", "read", 30)
    throttle = api.throttle[0]
    rate = throttle.rate
    throttle.rate = "3/m"
    throttle.num_requests, throttle.duration = throttle.parse_rate("3/m")
    try:
        assert [_me(client, first).status_code for _ in range(4)] == [200, 200, 200, 429]
        assert _me(client, second).status_code == 200
    finally:
        throttle.rate = rate
        throttle.num_requests, throttle.duration = throttle.parse_rate(rate)


@override_settings(DEBUG=True)  # where ninja's own bearer parser logs a malformed header whole
@pytest.mark.filterwarnings("ignore:Django checks for ServeStatic")
@pytest.mark.django_db
def test_a_malformed_authorization_header_is_never_logged(client, viewer, caplog):
    _, text = do_create_token(viewer, "CI", "read", 30)
    with caplog.at_level(logging.DEBUG):
        assert client.get("/api/v1/me", headers={"Authorization": f"Token {text}"}).status_code == 401
    assert text[len("evh_") + 13 :] not in caplog.text


@pytest.mark.django_db
def test_only_live_tokens_count_towards_the_limit(viewer):
    from evalhub.accounts.actions import MAX_TOKENS

    made = [do_create_token(viewer, f"t{n}", "read", 30)[0] for n in range(MAX_TOKENS)]
    with pytest.raises(TokenRejected, match=f"You hold {MAX_TOKENS} live tokens"):
        do_create_token(viewer, "one more", "read", 30)
    ApiToken.objects.filter(pk=made[0].pk).update(expires_at=timezone.now() - timedelta(days=1))
    do_create_token(viewer, "in place of the expired one", "read", 30)
    do_revoke_token(made[1], viewer)
    do_create_token(viewer, "in place of the revoked one", "read", 30)
