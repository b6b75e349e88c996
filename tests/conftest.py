"""Shared fixtures: the three personas, services, and a report of what ran where."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time

import pytest
from hypothesis import settings as hypothesis_settings

from tests.query_sizes import bounded  # noqa: F401  (a fixture the bounded-query tests share)

# In CI the property tests draw the same examples every run (derived from each test), so a landing is
# never decided by which examples a run happened to draw; on a developer's machine they explore anew
# (HYPOTHESIS_PROFILE=explore in CI too, to look further).
hypothesis_settings.register_profile("ci", derandomize=True)
hypothesis_settings.register_profile("explore", derandomize=False)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "explore"))

REDIS_URL = os.environ.get("REDIS_URL", "")
DATABASE_URL = os.environ.get("DATABASE_URL", "")
CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else "")

requires_redis = pytest.mark.skipif(
    not REDIS_URL, reason="REDIS_URL is not set: the real Celery worker + channels-redis round trip needs Redis"
)
requires_chromium = pytest.mark.skipif(
    not CHROMIUM, reason="Debian's chromium is not installed (apt-get install chromium); browser tests skipped"
)


def pytest_xdist_auto_num_workers(config) -> int:
    """`-n auto`: a worker per core, at most eight (each starts Celery workers and servers of its own,
    and Redis has 15 databases for them besides the given one)."""
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(usable, 8))


def pytest_report_header(config) -> list[str]:
    database = "PostgreSQL (DATABASE_URL)" if DATABASE_URL.startswith("postgres") else "SQLite (DATABASE_URL unset)"
    lines = [
        f"evalhub services: database={database}; redis={'yes (REDIS_URL)' if REDIS_URL else 'no (REDIS_URL unset)'}"
    ]
    if not DATABASE_URL.startswith("postgres"):
        lines.append("  PostgreSQL not configured: model and constraint tests run on SQLite only.")
    if not REDIS_URL:
        lines.append("  Redis not configured: the real-worker round trip over Redis is skipped; in-memory layers used.")
    if not CHROMIUM:
        lines.append("  Chromium not installed: browser tests are skipped.")
    return lines


def pytest_terminal_summary(terminalreporter) -> None:
    notes = pytest_report_header(None)[1:]
    if notes:
        terminalreporter.section("services not exercised in this run")
        for line in notes:
            terminalreporter.write_line(line.strip())


@pytest.fixture(autouse=True)
def _an_empty_response_cache():
    """Each test starts from an empty response cache. The cache outlives a test's transaction (its own
    connections commit), and its keys hold a fake server's address: a later test whose server got a
    port an earlier one used found that test's answers there and made fewer calls than it counted."""
    from evalhub.llm.cache import cache_thread
    from evalhub.system.model_access import shared_cache

    if shared_cache.cache_info().currsize:  # only once a test has made the cache: no connection before
        cache_thread().submit(lambda: None).result()  # an earlier test's writes not waited for land first
        shared_cache().clear()  # before the test, while it holds no lock on the table


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """pytest-django's, and before its teardown drops the test database on PostgreSQL, the
    connections the tests left open are ended: the shared response cache's own, and Django's in
    threads that ran database work (channels' sync_to_async, in-process runners), which a DROP
    DATABASE would otherwise refuse to run beside."""
    yield
    from django.db import connection

    from evalhub.llm.cache import cache_thread
    from evalhub.system.model_access import shared_cache

    if shared_cache.cache_info().currsize:
        cache = shared_cache()
        cache_thread().submit(lambda: None).result()  # its last writes, before its connections close
        if hasattr(cache, "close"):
            cache.close()
    if connection.vendor == "postgresql":
        with django_db_blocker.unblock(), connection.cursor() as cursor:
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )


def _pooled_in_use() -> int | None:
    """Connections of this process's PostgreSQL pool taken by other threads than this one (None before the
    pool is made, or with none): the test's own thread keeps its connection from test to test."""
    from django.db import connections

    pool = getattr(type(connections["default"]), "_connection_pools", {}).get("default")
    if pool is None:
        return None
    stats = pool.get_stats()
    own = connections["default"].connection is not None
    return stats.get("pool_size", 0) - stats.get("pool_available", 0) - own


_LEFT_TAKEN: dict[str, int] = {}  # test → pooled connections its threads ended holding


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Measured around the whole test, its fixtures' teardown included (an async test's event loop and its
    executor threads are gone by then, and with them what they held for a while)."""
    before = _pooled_in_use()
    yield
    if before is not None:
        from asgiref.sync import SyncToAsync
        from django.db import connections

        # The thread where channels' database_sync_to_async runs (a socket's login, a consumer's reads)
        # lives on from test to test; the connection it keeps is given back here, as a web process
        # would keep it for its next socket.
        SyncToAsync.single_thread_executor.submit(lambda: connections["default"].close()).result(timeout=30)
    after = _pooled_in_use()
    if before is not None and after is not None and after > before:
        _LEFT_TAKEN[item.nodeid] = after - before


@pytest.fixture(autouse=True)
def _no_pooled_connection_left_taken():
    """A thread a test starts that ends holding a pooled connection keeps it from the pool for good: ten
    such and a later test, far from the cause, waited 30 s and failed with "couldn't get a connection".
    The next test fails at once, naming the one that left it (close a thread's connections as it ends:
    tests/worker_threads.py)."""
    if _LEFT_TAKEN:
        left = ", ".join(f"{test} ({n})" for test, n in _LEFT_TAKEN.items())
        _LEFT_TAKEN.clear()
        pytest.fail(f"pooled database connections left taken by the threads of: {left}")
    yield


@pytest.fixture(autouse=True)
def empty_cache():
    """Every test starts and ends with an empty cache: a board cached by one test (its key holds a
    counts stamp that a rolled-back database repeats) must never answer another's page."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


def make_user(username: str, *roles: str, superuser: bool = False):
    from django.contrib.auth.models import Group, User

    user = User.objects.create_user(username=username, password="pw", is_superuser=superuser, is_staff=superuser)
    for role in roles:
        user.groups.add(Group.objects.get_or_create(name=role)[0])  # transactional tests flush groups
    return user


@pytest.fixture
def admin_user(db):
    return make_user("alice-admin", "admin")


@pytest.fixture
def viewer(db):
    return make_user("victor-viewer", "viewer")


@pytest.fixture
def adjudicator(db):
    return make_user("ada-adjudicator", "adjudicator")


@pytest.fixture
def outsider(db):
    """Logged in, but in no role group."""
    return make_user("olga-outsider")


@pytest.fixture
def queries_for():
    """queries_for(client, url): how many database queries one successful GET of `url` makes."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def count(client, url: str) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    return count


@pytest.fixture
def login(client):
    def log_in(user):
        client.force_login(user)
        return client

    return log_in


@pytest.fixture(autouse=True)
def fresh_channel_layer():
    """Each test gets its own channel layer: a layer keeps per-event-loop state, and every
    async test runs on a new loop."""
    from channels.layers import channel_layers

    channel_layers.backends.clear()
    yield
    channel_layers.backends.clear()


@pytest.fixture(scope="session")
def tiny_tokenizer():
    from evalhub.llm.tiny import build_tokenizer
    from tests.tiny_models import CORPUS

    return build_tokenizer(CORPUS, vocab_size=600)


@pytest.fixture(scope="session")
def tiny_model(tiny_tokenizer):
    from evalhub.llm.tiny import build_causal_lm

    return build_causal_lm(len(tiny_tokenizer), "tiny", seed=1)


def start_asgi_server():
    """evalhub.asgi under uvicorn in a thread of this process (it sees the test database): its
    address, the server (set should_exit to stop it) and its thread."""
    import uvicorn

    from evalhub.asgi import application

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(application, host="127.0.0.1", port=port, lifespan="off", log_level="warning")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    return f"http://127.0.0.1:{port}", server, thread


@pytest.fixture
def asgi_server():
    url, server, thread = start_asgi_server()
    yield url
    server.should_exit = True
    thread.join(10)
