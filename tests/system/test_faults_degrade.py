"""Faults degrade, never 500 (issue 78): a read or a sign-in whose database connection dies under it is
answered once more on a fresh connection; the cache fails open to the database while Redis is away;
a lost job message is sent again within a stated bound."""

from __future__ import annotations

import logging

import pytest
from django.contrib.auth.backends import ModelBackend
from django.core.cache import caches
from django.db import connection
from django.test import Client, override_settings

from evalhub.system.redis_cache import FailOpenRedisCache
from tests.conftest import make_user

POSTGRES = pytest.mark.skipif(connection.vendor != "postgresql", reason="cuts a PostgreSQL connection")


def cut_own_connection() -> None:
    """The server ends this very connection, as a restart or pg_terminate_backend does."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_terminate_backend(pg_backend_pid())")


@pytest.fixture
def cut_once(monkeypatch):
    """Cut the connection the first time `target.name` is called, then let it run."""

    def install(target, name: str) -> list[int]:
        original, calls = getattr(target, name), []

        def cut_then_run(*args, **kwargs):
            calls.append(1)
            if len(calls) == 1:
                cut_own_connection()
            return original(*args, **kwargs)

        monkeypatch.setattr(target, name, cut_then_run)
        return calls

    yield install
    connection.close()  # a write's cut connection is left as the request left it


@POSTGRES
@pytest.mark.django_db(transaction=True)
def test_a_sign_in_whose_connection_is_cut_is_answered_on_a_fresh_one(cut_once, caplog):
    make_user("ann", "viewer")
    calls = cut_once(ModelBackend, "authenticate")
    client = Client(raise_request_exception=False)
    response = client.post("/login/", {"username": "ann", "password": "pw"})
    assert response.status_code == 302, response.status_code
    assert len(calls) == 2, "asked once more after the cut"
    assert client.get("/").status_code == 200, "signed in"
    assert "its database connection was lost" in caplog.text


@POSTGRES
@pytest.mark.django_db(transaction=True)
def test_a_read_whose_connection_is_cut_is_answered_and_a_write_is_not_run_twice(cut_once):
    from evalhub.dashboards import views as board_views

    client = Client(raise_request_exception=False)
    client.force_login(make_user("vic", "viewer"))
    calls = cut_once(board_views, "fingerprint")  # the page's first read of the data
    assert client.get("/leaderboards/").status_code == 200
    assert len(calls) == 2
    admin = make_user("ada", "admin")
    client.force_login(admin)
    from evalhub.alignment import views as alignment_views

    writes = cut_once(alignment_views, "do_create_judge")
    response = client.post(
        "/judge-versions/new/",
        {
            "name": "j",
            "spec": "heuristic",
            "criteria_variant": "original",
            "samples": 1,
            "scale": "choice",
            "temperature": 0,
        },
    )
    assert response.status_code == 500 and len(writes) == 1, "a write is left failed, never run again"


UNREACHABLE = {
    "default": {
        "BACKEND": "evalhub.system.redis_cache.FailOpenRedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",  # nothing listens there
        "OPTIONS": {"socket_connect_timeout": 0.2, "socket_timeout": 0.2, "client_name": "unreachable"},
    }
}


@pytest.mark.django_db
def test_while_redis_is_away_the_pages_answer_from_the_database_and_say_so_in_the_log(client, caplog):
    client.force_login(make_user("vic", "viewer"))
    caplog.set_level(logging.WARNING)
    before = FailOpenRedisCache.failures
    with override_settings(CACHES=UNREACHABLE):
        assert isinstance(caches["default"], FailOpenRedisCache)
        for url in ("/leaderboards/", "/judges/", "/models/", "/"):
            assert client.get(url).status_code == 200, url
    assert FailOpenRedisCache.failures > before
    assert "the cache is unreachable" in caplog.text


def test_the_cache_fails_open_call_by_call():
    cache = FailOpenRedisCache("redis://127.0.0.1:1/0", UNREACHABLE["default"])
    assert cache.get("k", "fallback") == "fallback"
    assert cache.get_many(["a", "b"]) == {}
    assert cache.add("k", 1) is False
    assert cache.set("k", 1) is None
    assert cache.incr("k") is None
    assert cache.get_or_set("k", lambda: 42) == 42


def test_a_lost_job_message_is_sent_again_within_a_minute(settings):
    look = max(1.0, settings.EVALHUB_STALL_SECONDS / 2)  # the watchdog's interval (evalhub.jobs.watchdog)
    assert settings.EVALHUB_UNCLAIMED_SECONDS + look <= 60, "the bound the manual states for an idle queue"
