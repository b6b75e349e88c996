"""Guessing passwords: five failures lock the account and the address, with a clear page and an admin unlock."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.test import Client

from tests.conftest import make_user

pytestmark = pytest.mark.django_db


def sign_in(username: str, password: str, address: str = "203.0.113.7"):
    return Client(REMOTE_ADDR=address).post("/login/", {"username": username, "password": password})


@pytest.fixture
def alice(db):
    user = make_user("alice", "viewer")
    user.set_password("correct horse battery staple")
    user.save()
    return user


def test_after_five_wrong_passwords_even_the_right_one_is_refused_with_a_clear_page(alice, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in("alice", "guess").status_code == 200, "a wrong password: the form again"
    locked = sign_in("alice", "guess")
    assert locked.status_code == 429
    assert "Sign-in locked for a while" in locked.content.decode()
    assert "15 minutes" in locked.content.decode()
    refused = sign_in("alice", "correct horse battery staple")
    assert refused.status_code == 429
    assert "_auth_user_id" not in refused.client.session


def test_the_lock_holds_per_account_from_any_address(alice, settings):
    for number in range(settings.AXES_FAILURE_LIMIT):
        sign_in("alice", "guess", address=f"198.51.100.{number}")
    assert sign_in("alice", "correct horse battery staple", address="192.0.2.99").status_code == 429


def test_the_lock_holds_per_address_for_any_account(alice, settings):
    for number in range(settings.AXES_FAILURE_LIMIT):
        sign_in(f"someone{number}", "guess", address="198.51.100.1")
    assert sign_in("alice", "correct horse battery staple", address="198.51.100.1").status_code == 429
    assert sign_in("alice", "correct horse battery staple", address="198.51.100.2").status_code == 302


def test_a_forged_forwarded_for_header_does_not_give_a_fresh_address(alice, settings):
    for number in range(settings.AXES_FAILURE_LIMIT):
        Client(REMOTE_ADDR="198.51.100.1", HTTP_X_FORWARDED_FOR=f"10.0.0.{number}").post(
            "/login/", {"username": f"someone{number}", "password": "guess"}
        )
    assert sign_in("alice", "correct horse battery staple", address="198.51.100.1").status_code == 429


def test_a_success_before_the_limit_starts_the_count_again(alice, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in("alice", "guess")
    assert sign_in("alice", "correct horse battery staple").status_code == 302
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        sign_in("alice", "guess")
    assert sign_in("alice", "correct horse battery staple").status_code == 302


def test_an_admin_unlocks_an_account_from_the_admin_or_the_command_line(alice, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        sign_in("alice", "guess", address="198.51.100.1")
    admin = Client()
    admin.force_login(make_user("root", superuser=True))
    page = admin.get("/admin/axes/accessattempt/")
    assert page.status_code == 200, page
    listing = page.content.decode()
    assert "alice" in listing
    assert "198.51.100.1" in listing
    call_command("axes_reset_username", "alice")
    assert sign_in("alice", "correct horse battery staple", address="192.0.2.5").status_code == 302
