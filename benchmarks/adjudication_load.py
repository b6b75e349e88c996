"""Adjudication under load: N people at once against one, over real HTTP, on uvicorn and PostgreSQL.

The benchmark makes a database of its own on the PostgreSQL server it is given (dropped at the end),
migrates it, starts `uvicorn evalhub.asgi:application --workers 2` on loopback, and then, in one run:

1. one adjudicator drains a queue of single-verdict items;
2. N adjudicators (default 20) drain a queue whose items each need two verdicts.

Each person works as the browser does: "Start" (POST /adjudicate/start/, which reserves an item),
then verdict after verdict with htmx (in a blind-first run, the default, a blind verdict first, then
the verdict after the aid: POST …/submit/, which stores the verdict and reserves the next
item in the same request), reading each item for `--think` seconds (jittered ±50 %; people take
far longer, but this keeps the queue busy) and, in a blind-first run, the aid for `--read-aid`
seconds (as long as the item by default) before the second verdict. `--read-aid 0` sends the second
verdict at once: each person then asks twice as often as in a one-stage run. `--think 0` sends
verdicts back to back: that measures the server's capacity, where queueing on two cores dominates
whatever the code does.

The two sides alternate over `--repeats` rounds (one, N, one, N …), each round on a queue of its
own. It prints, per side, p50 / p95 of reserve and submit pooled over the rounds, the spread (min /
median / max) of each round's submit p95, and the web server's CPU time per verdict (its processes'
own clocks, from the kernel's accounting) beside the wall time; then the ratio of the median submit p95s (bound:
under 4×, exit 1 otherwise) and the invariants from the database: every item got exactly the
verdicts it needs, nobody judged an item twice, and every verdict a person was told was stored is
stored (exit 1 when one breaks).

    python benchmarks/adjudication_load.py --adjudicators 20 --items 150
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres python benchmarks/adjudication_load.py
"""

from __future__ import annotations

import argparse
import os
import re
import secrets
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
ITEM = re.compile(r'id="adjudication-area"[^>]*data-item="(\d+)"|data-item="(\d+)"[^>]*id="adjudication-area"')
STEP = re.compile(r'name="step" value="(\w+)"')  # the screen's step: blind, reveal or one_stage
BENCH_DATABASE = "evalhub_bench_adjudication"
RATIO_BOUND = 4.0  # N people's submit p95 against one person's


def database_url(server: str, name: str = BENCH_DATABASE) -> str:
    parts = urlsplit(server)
    return urlunsplit(parts._replace(path=f"/{name}"))


def recreate_database(server: str, name: str = BENCH_DATABASE) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        connection.execute(f"CREATE DATABASE {name}")


def drop_database(server: str, name: str = BENCH_DATABASE) -> None:
    import psycopg

    with psycopg.connect(server, autocommit=True) as connection:
        connection.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def fresh_deployment(
    server: str, name: str, redis_url: str, data_dir: str, *, flush_redis: bool = True
) -> dict[str, str]:
    """A database of the benchmark's own, made afresh, and (`flush_redis`) its own Redis database emptied:
    the environment of the evalhub processes it starts (production settings, plain HTTP on loopback)."""
    if flush_redis:
        import redis

        redis.Redis.from_url(redis_url).flushdb()
    recreate_database(server, name)
    return {
        "DATABASE_URL": database_url(server, name),
        "REDIS_URL": redis_url,
        "SECRET_KEY": secrets.token_urlsafe(50),
        "EVALHUB_DATA_DIR": str(Path(os.environ.get("TMPDIR", "/tmp")) / data_dir),
        "EVALHUB_ALLOWED_HOSTS": "127.0.0.1",
        "EVALHUB_SSL_REDIRECT": "false",
        "EVALHUB_SECURE_COOKIES": "false",
        "EVALHUB_LOG_LEVEL": "WARNING",
    }


def setup_django(env: dict[str, str]) -> None:
    os.environ.update(env)
    os.environ["DJANGO_SETTINGS_MODULE"] = "evalhub.settings"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def make_items(name: str, count: int, required: int) -> list[int]:
    from evalhub.adjudication.models import AdjudicationItem
    from evalhub.catalog.demo import do_load_builtin_criteria
    from evalhub.catalog.models import Benchmark, Criterion, LanguageModel, Prompt, Response
    from evalhub.debates.actions import do_create_run
    from evalhub.debates.models import DebateStatus

    do_load_builtin_criteria()
    benchmark, _ = Benchmark.objects.get_or_create(slug=name, defaults={"name": name})
    a, _ = LanguageModel.objects.get_or_create(slug="model-a", defaults={"display_name": "A"})
    b, _ = LanguageModel.objects.get_or_create(slug="model-b", defaults={"display_name": "B"})
    for index in range(count):
        prompt = Prompt.objects.create(benchmark=benchmark, external_id=f"{index}", text=f"Question {index}?")
        Response.objects.create(prompt=prompt, model=a, text=f"Answer A to {index}.")
        Response.objects.create(prompt=prompt, model=b, text=f"Answer B to {index}.")
    run = do_create_run(
        name=name,
        benchmark=benchmark,
        criterion=Criterion.objects.get(slug="helpfulness"),
        model_a=a,
        model_b=b,
        agents=["heuristic"],
        human_verdicts=required,
        tie_policy="admin",  # a split goes to an admin: the number of verdicts per item is fixed
    )
    run.debates.update(status=DebateStatus.UNRESOLVED, rounds_used=1)
    items = AdjudicationItem.objects.bulk_create(
        [AdjudicationItem(debate=debate, required_verdicts=required) for debate in run.debates.order_by("id")]
    )
    return [item.pk for item in items]


def session_for(username: str, role: str = "adjudicator") -> str:
    """A signed-in session made directly (no password hashing, no sign-in throttling in the way)."""
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import Group, User
    from django.contrib.sessions.backends.db import SessionStore

    user = User.objects.create_user(username=username)
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.save()
    return session.session_key


class Server:
    def __init__(self, env: dict[str, str], workers: int, port: int = 0) -> None:
        self.port = port
        if not port:  # any free one
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                self.port = probe.getsockname()[1]
        command = [sys.executable, "-m", "uvicorn", "evalhub.asgi:application", "--host", "127.0.0.1"]
        command += ["--port", str(self.port), "--workers", str(workers), "--log-level", "warning"]
        self.process = subprocess.Popen(command, cwd=ROOT, env={**os.environ, **env})
        self.url = f"http://127.0.0.1:{self.port}"
        import httpx

        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise SystemExit("uvicorn did not start")
            time.sleep(0.2)

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=20)


class Person:
    """One adjudicator's browser: a session cookie, a CSRF token, and what they were told."""

    def __init__(self, base: str, session_key: str) -> None:
        import httpx

        token = secrets.token_hex(16)
        self.client = httpx.Client(
            base_url=base,
            cookies={"sessionid": session_key, "csrftoken": token},
            headers={"X-CSRFToken": token},
            timeout=120,
        )
        self.reserve_seconds: list[float] = []
        self.submit_seconds: list[float] = []
        self.blind_seconds: list[float] = []  # a blind-first run's first verdict on each item
        self.stored: list[int] = []
        self.errors: list[str] = []

    def work(self, rng_seed: int, think: float, read_aid: float) -> None:
        import random

        rng = random.Random(rng_seed)
        started = time.perf_counter()
        response = self.client.post("/adjudicate/start/")
        self.reserve_seconds.append(time.perf_counter() - started)
        if response.status_code == 200:  # nothing to do: the "done" page
            return
        if response.status_code != 302:
            self.errors.append(f"start: {response.status_code}")
            return
        page = self.client.get(response.headers["location"]).text
        while True:
            match = ITEM.search(page)
            if match is None:
                return  # the "all done" partial
            item = int(match.group(1) or match.group(2))
            if think:
                time.sleep(think * rng.uniform(0.5, 1.5))
            step = STEP.search(page)
            if step is not None and step.group(1) == "blind":  # blind-first (the default): the verdict before
                started = time.perf_counter()  # the aid, then the screen again with it
                response = self.client.post(
                    f"/adjudicate/items/{item}/submit/",
                    data={"verdict": rng.choice("012"), "step": "blind"},
                    headers={"HX-Request": "true"},
                )
                self.blind_seconds.append(time.perf_counter() - started)
                if response.status_code != 200:
                    self.errors.append(f"blind {item}: {response.status_code} {response.text[:200]}")
                    return
                step = STEP.search(response.text)
                if read_aid:  # the screen now shows the aid (the debate, a critique or nothing): read it
                    time.sleep(read_aid * rng.uniform(0.5, 1.5))
            started = time.perf_counter()
            response = self.client.post(
                f"/adjudicate/items/{item}/submit/",
                data={"verdict": rng.choice("012"), **({"step": step.group(1)} if step else {})},
                headers={"HX-Request": "true"},
            )
            self.submit_seconds.append(time.perf_counter() - started)
            if response.status_code != 200:
                self.errors.append(f"submit {item}: {response.status_code} {response.text[:200]}")
                return
            self.stored.append(item)
            page = response.text


def drain(base: str, sessions: list[str], think: float, read_aid: float) -> list[Person]:
    people = [Person(base, key) for key in sessions]
    barrier = threading.Barrier(len(people))

    def run(person: Person, seed: int) -> None:
        barrier.wait()
        try:
            person.work(seed, think, read_aid)
        except Exception as error:  # noqa: BLE001  (reported with the invariants)
            person.errors.append(repr(error))

    threads = [threading.Thread(target=run, args=(person, seed)) for seed, person in enumerate(people)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return people


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process and all its descendants so far (Linux /proc)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total, todo = 0.0, [pid]
    while todo:
        current = todo.pop()
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks  # utime, stime (fields 14, 15 of stat)
            for task in Path(f"/proc/{current}/task").iterdir():
                todo += [int(child) for child in (task / "children").read_text().split()]
        except (FileNotFoundError, ProcessLookupError):
            continue  # gone since it was listed
    return total


def percentiles(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return statistics.median(ordered), p95


def check_invariants(people: list[Person], item_ids: list[int], required: int) -> list[str]:
    from evalhub.adjudication.models import Adjudication, AdjudicationItem, Reservation

    problems = [error for person in people for error in person.errors]
    told = Counter(item for person in people for item in person.stored)
    stored = Counter(Adjudication.objects.filter(item_id__in=item_ids).values_list("item_id", flat=True))
    if told != stored:
        problems.append(f"told stored ≠ stored: {sum(told.values())} told, {sum(stored.values())} in the database")
    if set(stored.values()) != {required} or len(stored) != len(item_ids):
        problems.append(f"verdicts per item: {Counter(stored.values())} over {len(stored)} of {len(item_ids)} items")
    for person in people:
        if len(person.stored) != len(set(person.stored)):
            problems.append("someone judged an item twice")
    open_items = AdjudicationItem.objects.filter(pk__in=item_ids, status="open").count()
    if open_items:
        problems.append(f"{open_items} items still open")
    if Reservation.objects.filter(item_id__in=item_ids).exists():
        problems.append("reservations left behind")
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--adjudicators", type=int, default=20)
    parser.add_argument("--items", type=int, default=150, help="items of the N-person queue (two verdicts each)")
    parser.add_argument("--single-items", type=int, default=40, help="items of the one-person queue")
    parser.add_argument("--web-workers", type=int, default=2, help="uvicorn worker processes")
    parser.add_argument(
        "--redis-url",
        default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15"),
        help="the channel layer (and broker) of the web processes, as in production; '' for in-memory",
    )
    parser.add_argument("--think", type=float, default=0.5, help="seconds a person reads an item (0: back to back)")
    parser.add_argument(
        "--read-aid",
        type=float,
        default=None,
        help="seconds a person reads the aid before the verdict after it (blind-first; default: --think)",
    )
    parser.add_argument("--repeats", type=int, default=2, help="rounds of each side, alternated (one, N, one, N …)")
    parser.add_argument(
        "--database-server",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
        help="a PostgreSQL URL; the benchmark makes and drops a database of its own there",
    )
    args = parser.parse_args()
    read_aid = args.think if args.read_aid is None else args.read_aid

    # Its Redis may be the one REDIS_URL names (or none): not flushed.
    env = fresh_deployment(
        args.database_server, BENCH_DATABASE, args.redis_url, "evalhub-bench-adjudication", flush_redis=False
    )
    server = None
    try:
        setup_django(env)
        server = Server(env, args.web_workers)
        sides = {
            "1 adjudicator": (1, args.single_items, 1),
            f"{args.adjudicators} adjudicators": (args.adjudicators, args.items, 2),
        }
        rounds: dict[str, list[tuple[list[Person], float, float]]] = {label: [] for label in sides}
        problems: list[str] = []
        checked = Counter()
        for repeat in range(args.repeats):
            for label, (people_count, item_count, required) in sides.items():
                items = make_items(f"r{repeat}-{people_count}-people", item_count, required=required)
                sessions = [session_for(f"r{repeat}-p{people_count}-{i}") for i in range(people_count)]
                cpu_before, started = cpu_seconds(server.process.pid), time.perf_counter()
                people = drain(server.url, sessions, args.think, read_aid)
                wall, cpu = time.perf_counter() - started, cpu_seconds(server.process.pid) - cpu_before
                rounds[label].append((people, wall, cpu))
                problems += check_invariants(people, items, required)
                checked[required] += len(items)

        print(f"think {args.think} s, the aid read {read_aid} s; {args.repeats} rounds a side, alternated")
        print(
            f"{'':18} {'verdicts':>8} {'per s':>6} {'reserve p50':>12} {'reserve p95':>12} {'submit p50':>11} "
            f"{'submit p95':>11}  {'submit p95 per round (min / median / max)':>42} {'server CPU / verdict':>21}"
        )
        median_p95 = {}
        for label, results in rounds.items():
            people = [person for round_people, _, _ in results for person in round_people]
            reserve = [s for p in people for s in p.reserve_seconds]
            submit = [s for p in people for s in p.submit_seconds]
            verdicts = sum(len(p.stored) for p in people)
            wall = sum(w for _, w, _ in results)
            per_round = [
                percentiles([s for p in round_people for s in p.submit_seconds])[1] for round_people, _, _ in results
            ]
            median_p95[label] = statistics.median(per_round)
            r50, r95 = percentiles(reserve)
            s50, s95 = percentiles(submit)
            spread = " / ".join(f"{value * 1000:.0f}" for value in (min(per_round), median_p95[label], max(per_round)))
            cpu = sum(c for _, _, c in results) / max(1, verdicts)
            print(
                f"{label:18} {verdicts:8d} {verdicts / wall:6.1f} {r50 * 1000:10.0f}ms {r95 * 1000:10.0f}ms "
                f"{s50 * 1000:9.0f}ms {s95 * 1000:9.0f}ms  {spread + ' ms':>42} {cpu * 1000:17.1f} ms"
            )
        for label, results in rounds.items():
            blind = [s for round_people, _, _ in results for p in round_people for s in p.blind_seconds]
            if blind:  # the submit above is then the verdict after the aid, which also reserves the next item
                b50, b95 = percentiles(blind)
                print(f"{label:18} blind verdicts (before the aid) p50 {b50 * 1000:.0f} ms, p95 {b95 * 1000:.0f} ms")
        one, many = median_p95.values()
        ratio = many / one
        print(
            f"submit p95 (median of rounds), {args.adjudicators} people / 1 person: {ratio:.2f}x "
            f"(bound: under {RATIO_BOUND:g}x)"
        )
        if problems:
            print("INVARIANTS BROKEN:\n  " + "\n  ".join(problems[:20]))
            raise SystemExit(1)
        print(
            f"invariants hold: {checked[2]} items × 2 verdicts and {checked[1]} × 1, "
            "every told verdict stored, nobody twice on an item, no reservation left"
        )
        if ratio >= RATIO_BOUND:
            raise SystemExit(1)
    finally:
        if server is not None:
            server.close()
        from django.db import connections

        connections.close_all()
        drop_database(args.database_server)


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        main()
