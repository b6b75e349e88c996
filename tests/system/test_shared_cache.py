"""The response cache every worker shares on PostgreSQL (issue 25), and pruning it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db import connection
from django.utils import timezone

from evalhub.llm.cache import PostgresResponseCache
from evalhub.llm.providers.openai_chat import OpenAICompatibleChat
from evalhub.llm.testing import FakeLLMServer
from evalhub.system.model_access import postgres_dsn
from evalhub.system.models import CachedResponse

ROOT = Path(__file__).resolve().parent.parent.parent
MESSAGES = [{"role": "user", "content": "Which answer is better?"}]
on_postgres = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the shared cache is PostgreSQL's: DATABASE_URL=postgres://…"
)

ANOTHER_WORKER = """
import asyncio, sys
from evalhub.llm.cache import PostgresResponseCache
from evalhub.llm.providers.openai_chat import OpenAICompatibleChat

async def main():
    client = OpenAICompatibleChat("judge", base_url=sys.argv[2], cache=PostgresResponseCache(sys.argv[1]))
    completion = await client.complete({messages!r})
    await client.aclose()
    print(completion.text, completion.cached)

asyncio.run(main())
"""


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_a_call_one_worker_process_paid_for_is_served_from_the_cache_to_another():
    dsn = postgres_dsn(connection.settings_dict)
    script = textwrap.dedent(ANOTHER_WORKER.format(messages=MESSAGES))
    with FakeLLMServer(api_key="not-needed", reply=lambda messages: "First.\n1") as server:
        first = subprocess.run(
            [sys.executable, "-c", script, dsn, f"{server.url}/v1"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        )
        assert first.stdout.split() == ["First.", "1", "False"], first.stderr
        assert server.request_count == 1

        async def here():
            client = OpenAICompatibleChat("judge", base_url=f"{server.url}/v1", cache=PostgresResponseCache(dsn))
            try:
                return await client.complete(MESSAGES)
            finally:
                await client.aclose()

        import asyncio

        completion = asyncio.run(here())
        assert completion.text == "First.\n1"
        assert completion.cached
        assert server.request_count == 1, "the second process paid for nothing"
    assert CachedResponse.objects.count() == 1


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_a_database_that_does_not_answer_is_a_miss_not_a_failed_call():
    cache = PostgresResponseCache("host=127.0.0.1 port=1 dbname=nothing connect_timeout=1")
    assert cache.get("any") is None
    from evalhub.llm.types import Completion

    cache.put("any", Completion(text="x", provider="p", model="m"))  # logged, not raised


@pytest.mark.django_db
def test_pruning_removes_what_is_older_than_asked_and_beyond_the_newest_kept():
    CachedResponse.objects.all().delete()  # on PostgreSQL, calls other tests made are in the shared table
    now = timezone.now()
    for age in range(6):
        CachedResponse.objects.create(key=f"k{age}", completion="{}", created_at=now - timedelta(days=age * 10))
    call_command("prune_llm_cache", "--days=35", stdout=None)
    assert sorted(CachedResponse.objects.values_list("key", flat=True)) == ["k0", "k1", "k2", "k3"]
    call_command("prune_llm_cache", "--keep=2")
    assert sorted(CachedResponse.objects.values_list("key", flat=True)) == ["k0", "k1"]
    call_command("prune_llm_cache", "--keep=0")
    assert not CachedResponse.objects.exists()


def test_pruning_with_nothing_said_is_refused():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="--days"):
        call_command("prune_llm_cache")


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_a_closed_cache_gives_its_connections_back_and_opens_new_ones_when_next_asked():
    from evalhub.llm.types import Completion

    cache = PostgresResponseCache(postgres_dsn(connection.settings_dict))
    cache.put("k" * 64, Completion(text="kept", provider="openai", model="m"))
    backend = cache._execute("SELECT pg_backend_pid()", ())[0]  # the pool's idle connection
    cache.close()
    for _ in range(40):  # the server ends the backend a moment after the client says goodbye
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [backend])
            if cursor.fetchone()[0] == 0:
                break
        time.sleep(0.05)
    else:
        pytest.fail("the cache's connections are still open")
    assert cache.get("k" * 64).text == "kept"


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_threads_asking_at_once_share_a_bounded_pool_of_the_caches_own_connections():
    """One connection behind a lock made every worker thread wait for every other's query."""
    import threading

    from evalhub.llm.types import Completion

    cache = PostgresResponseCache(postgres_dsn(connection.settings_dict))
    try:
        cache.put("p" * 64, Completion(text="shared", provider="openai", model="m"))
        seen: list[str] = []
        pids: set[int] = set()

        def ask() -> None:
            for _ in range(20):
                seen.append(cache.get("p" * 64).text)
                pids.add(cache._execute("SELECT pg_backend_pid()", ())[0])

        threads = [threading.Thread(target=ask) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        assert seen == ["shared"] * 160
        assert 1 <= len(pids) <= PostgresResponseCache.MAX_CONNECTIONS
    finally:
        cache.close()


def test_once_its_pool_exists_a_query_takes_no_lock():
    """Threads of one worker ask the shared cache at once: the lock guards making the pool, not a query."""

    class Refusing:
        def __enter__(self):
            raise AssertionError("a query waited on the process's lock")

        def __exit__(self, *exc):
            return False

    cache = PostgresResponseCache("host=127.0.0.1 port=1 dbname=nothing")
    cache._pool = pool = object()
    cache._lock = Refusing()
    assert cache._connections() is pool


def test_the_file_cache_forgets_everything_when_cleared(tmp_path):
    from evalhub.llm.cache import ResponseCache
    from evalhub.llm.types import Completion

    cache = ResponseCache(tmp_path / "cache.sqlite3")
    cache.put("k", Completion(text="x", provider="p", model="m"))
    assert len(cache) == 1
    cache.clear()
    assert len(cache) == 0 and cache.get("k") is None


@on_postgres
@pytest.mark.django_db(transaction=True)
def test_the_shared_cache_forgets_everything_when_cleared():
    from evalhub.llm.types import Completion

    cache = PostgresResponseCache(postgres_dsn(connection.settings_dict))
    try:
        cache.put("k", Completion(text="x", provider="p", model="m"))
        assert len(cache) == 1
        cache.clear()
        assert len(cache) == 0 and cache.get("k") is None
    finally:
        cache.close()
