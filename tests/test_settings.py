"""Settings come from the environment and are checked when they load."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evalhub.config import ConfigError, Env, check_database_url, check_redis_url

ROOT = Path(__file__).resolve().parent.parent


def load_settings(tmp_path, **env: str) -> subprocess.CompletedProcess:
    """Import evalhub.settings in a fresh interpreter with exactly `env` (plus a data folder)."""
    environment = {"PATH": os.environ["PATH"], "EVALHUB_DATA_DIR": str(tmp_path), **env}
    code = (
        "import evalhub.settings as s; "
        "print(s.DATABASES['default']['ENGINE'], s.CHANNEL_LAYERS['default']['BACKEND'], s.CELERY_BROKER_URL)"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True)


def test_with_no_services_configured_it_runs_embedded(tmp_path):
    result = load_settings(tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "django.db.backends.sqlite3",
        "evalhub.channel_layers.ThreadSafeInMemoryChannelLayer",
        "memory://localhost/",
    ]
    assert (tmp_path / "secret_key").stat().st_mode & 0o777 == 0o600


def test_with_postgres_and_redis_it_uses_them(tmp_path):
    result = load_settings(
        tmp_path, SECRET_KEY="k", DATABASE_URL="postgres://u@db:5432/evalhub", REDIS_URL="redis://cache:6379/0"
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "django.db.backends.postgresql",
        "evalhub.channel_layers.WatchedRedisChannelLayer",
        "redis://cache:6379/0",
    ]


def test_redis_connections_are_bounded_per_loop_and_per_process_as_configured(tmp_path):
    environment = {
        "PATH": os.environ["PATH"],
        "EVALHUB_DATA_DIR": str(tmp_path),
        "SECRET_KEY": "k",
        "REDIS_URL": "redis://cache:6379/0",
        "EVALHUB_REDIS_MAX_CONNECTIONS": "7",
    }
    code = (
        "import evalhub.settings as s; "
        "print(s.CHANNEL_LAYERS['default']['CONFIG']['hosts'][0]['max_connections'], "
        "s.CACHES['default']['OPTIONS']['max_connections'], s.CACHES['default']['OPTIONS']['pool_class'])"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["7", "7", "redis.BlockingConnectionPool"]


def pool_of(tmp_path, database_url: str, **env: str) -> subprocess.CompletedProcess:
    environment = {"PATH": os.environ["PATH"], "EVALHUB_DATA_DIR": str(tmp_path), "SECRET_KEY": "k", **env}
    environment["DATABASE_URL"] = database_url
    code = "import evalhub.settings as s; print(s.DATABASES['default'].get('OPTIONS', {}).get('pool'))"
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True)


def test_postgresql_connections_come_from_one_bounded_pool_per_process_as_configured(tmp_path):
    default = pool_of(tmp_path, "postgres://u@db:5432/evalhub")
    assert default.returncode == 0, default.stderr
    assert default.stdout.strip() == "{'min_size': 1, 'max_size': 10, 'timeout': 30}"
    chosen = pool_of(
        tmp_path, "postgres://u@db:5432/evalhub", EVALHUB_DB_POOL_MAX_SIZE="4", EVALHUB_DB_POOL_TIMEOUT="5"
    )
    assert chosen.stdout.strip() == "{'min_size': 1, 'max_size': 4, 'timeout': 5}"
    assert pool_of(tmp_path, "postgres://u@db:5432/evalhub", EVALHUB_DB_POOL_MAX_SIZE="0").stdout.strip() == "None"
    assert pool_of(tmp_path, f"sqlite:///{tmp_path / 'x.sqlite3'}").stdout.strip() == "None"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"DATABASE_URL": "postgres://db/x"}, "SECRET_KEY must be set"),
        ({"EVALHUB_REDIS_MAX_CONNECTIONS": "1"}, "EVALHUB_REDIS_MAX_CONNECTIONS=1 must be at least 2"),
        ({"DATABASE_URL": "mysql://db/x", "SECRET_KEY": "k"}, "DATABASE_URL has scheme 'mysql'"),
        ({"REDIS_URL": "http://cache", "SECRET_KEY": "k"}, "REDIS_URL must look like redis://"),
        ({"EVALHUB_DEBUG": "maybe"}, "EVALHUB_DEBUG='maybe' is not a boolean"),
        ({"EVALHUB_MAX_IMPORT_BYTES": "lots"}, "EVALHUB_MAX_IMPORT_BYTES='lots' is not an integer"),
        ({"EVALHUB_WORKER_CONCURRENCY": "0"}, "EVALHUB_WORKER_CONCURRENCY=0 must be at least 1"),
        ({"EVALHUB_HTTP_CLIENT": "requests"}, "EVALHUB_HTTP_CLIENT='requests' is not one of aiohttp, httpx"),
    ],
)
def test_a_bad_setting_stops_the_start_with_a_message_naming_it(tmp_path, env, message):
    result = load_settings(tmp_path, **env)
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert message in result.stderr


def test_env_parses_lists_and_defaults():
    env = Env({"HOSTS": " a.example, b.example ,", "EMPTY": ""})
    assert env.list("HOSTS", []) == ["a.example", "b.example"]
    assert env.list("EMPTY", ["x"]) == ["x"]
    assert env.int("MISSING", 7) == 7
    assert env.bool("MISSING", True)
    assert Env({"CLIENT": " HTTPX "}).choice("CLIENT", ("aiohttp", "httpx")) == "httpx"
    assert Env({}).choice("CLIENT", ("aiohttp", "httpx")) == "aiohttp"


def test_url_checks_accept_the_supported_schemes():
    assert check_database_url("sqlite:///tmp/x.sqlite3")
    assert check_database_url("postgresql://h/d")
    assert check_redis_url("rediss://h:6380/1")
    with pytest.raises(ConfigError):
        check_redis_url("redis://")


def shipped_production_env(tmp_path) -> dict[str, str]:
    """.env.example as docker-compose loads it, with a real secret (the placeholder is refused)."""
    shipped = {}
    for line in (ROOT / ".env.example").read_text().splitlines():
        if line and not line.startswith("#") and "=" in line:
            key, value = line.split("=", 1)
            shipped[key] = value
    return {"PATH": os.environ["PATH"], "EVALHUB_DATA_DIR": str(tmp_path), **shipped}


def test_check_deploy_is_clean_with_the_shipped_production_settings(tmp_path):
    import secrets

    env = {**shipped_production_env(tmp_path), "SECRET_KEY": secrets.token_urlsafe(50)}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "evalhub.settings"},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_the_placeholder_secret_key_of_the_example_file_is_refused_in_production(tmp_path):
    result = load_settings(tmp_path, **{k: v for k, v in shipped_production_env(tmp_path).items() if k != "PATH"})
    assert result.returncode != 0
    assert "SECRET_KEY is still 'change-me'" in result.stderr


def test_production_redirects_to_https_sends_hsts_and_a_csp_but_not_for_the_health_check(tmp_path):
    import secrets

    env = {**shipped_production_env(tmp_path), "SECRET_KEY": secrets.token_urlsafe(50), "EVALHUB_BEHIND_PROXY": "true"}
    code = (
        "import django; django.setup(); from django.test import Client; c = Client(); "
        "r = c.get('/login/'); print(r.status_code, r['Location']); "
        "r = c.get('/login/', headers={'X-Forwarded-Proto': 'https'}); "
        "print(r.status_code, r['Strict-Transport-Security']); print(r['Content-Security-Policy']); "
        "print(c.get('/healthz').status_code != 301)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env={**env, "DJANGO_SETTINGS_MODULE": "evalhub.settings", "EVALHUB_ALLOWED_HOSTS": "testserver"},
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "301 https://testserver/login/"
    assert lines[1] == "200 max-age=31536000; includeSubDomains; preload"
    assert "script-src 'self'" in lines[2]
    assert "frame-ancestors 'none'" in lines[2]
    assert lines[3] == "True", "the container's plain-HTTP health check is not redirected"


@pytest.mark.parametrize(
    "entry",
    [["manage.py", "check"], ["-c", "import evalhub.asgi"], ["-c", "import evalhub.celery"]],
    ids=["manage.py", "web server", "worker"],
)
def test_a_missing_secret_key_in_production_is_one_line_naming_it_and_exit_status_1(tmp_path, entry):
    env = {"PATH": os.environ.get("PATH", ""), "DATABASE_URL": "postgres://u@127.0.0.1:5432/x"}
    env.update(EVALHUB_DATA_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="evalhub.settings")
    result = subprocess.run([sys.executable, *entry], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "evalhub cannot start: SECRET_KEY must be set when DATABASE_URL or REDIS_URL is set (production)."
    ]


def test_a_worker_keeps_trying_to_reach_the_broker_for_as_long_as_it_is_down():
    from evalhub.celery import app

    assert app.conf.broker_connection_max_retries is None  # Celery's default, 100, ends the worker
    assert app.conf.broker_connection_retry_on_startup is True
