"""Every page type at scale (issue 79): a generated database of imported pairwise judgments in
AlpacaEval's shape (each of `--judges` judges, `--people` of them people, compares models with one
baseline on the benchmark's prompts; `--models` models), every page a researcher opens, through Django's
test client in this process (server CPU is this process's CPU: the database server's own time is in the
wall figure only): home, the benchmark, a prompt, `/leaderboards/`, the win-rate page and its export,
a model's page, the judge lab, a judge's page, the corrected boards, pointwise, graded, the judge
report export, a judge's export, the pointwise export, the judge versions and a version's page and export.

For each page: **first** (nothing computed yet: a page either computes a small result or asks a
worker), then the workers' part (every kept result a page asked for, computed here in turn, CPU
timed), **changed** (the data moved on: one new judgment, so every page's cached result is for older
data and the page shows the kept one, marked, asking a worker; a win-rate export answers 503 with
Retry-After until the worker is done), and **warm** (asked again). Query
counts are printed beside the times. Exits 1 when a changed or warm page's p95 passes the bounds
(2 s changed, 500 ms warm) or a page's query count differs between two sizes given with `--sizes`.

With `--server` (PostgreSQL and Redis), the pages are asked over HTTP of the production web server
(uvicorn, one process) and the workers' part is a real Celery worker's: the CPU beside each wall time is
the server process's, a round's workers' figure the worker's, and the round waits until no refresh is in
flight; query counts are the in-process run's to compare.

    python benchmarks/page_scale.py                                    # SQLite in a temporary folder
    python benchmarks/page_scale.py --sizes 100000 1000000             # two sizes, query counts compared
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres python benchmarks/page_scale.py --sizes 1000000
    DATABASE_URL=… REDIS_URL=redis://127.0.0.1:6379/7 python benchmarks/page_scale.py --sizes 1000000 --server
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("SECRET_KEY", "benchmark-only")
os.environ.setdefault("EVALHUB_SSL_REDIRECT", "false")
os.environ.setdefault("EVALHUB_DATA_DIR", tempfile.mkdtemp(prefix="evalhub-page-scale-"))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth.models import Group, User  # noqa: E402
from django.core.cache import cache  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from django.test import Client  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_databases, setup_test_environment, teardown_databases  # noqa: E402
from measured import machine  # noqa: E402  (benchmarks/, beside this script)
from page_timing import percentile  # noqa: E402  (benchmarks/, beside this script)

from evalhub.alignment.actions import do_create_judge  # noqa: E402
from evalhub.catalog.models import Benchmark, Criterion, Judgment, LanguageModel, Prompt, Response  # noqa: E402
from evalhub.core.alignment.versions import JudgeDefinition  # noqa: E402
from evalhub.dashboards.counts import do_rebuild_tallies  # noqa: E402
from evalhub.judgelab.report import judge_key  # noqa: E402
from evalhub.system.bulk_insert import insert_rows  # noqa: E402

CHANGED_BOUND_S, WARM_BOUND_S = 2.0, 0.5
COLUMNS = ("criterion_id", "judge_model_id", "response_id", "response_2_id", "verdict", "probability")


def build(judgments: int, judges: int, people: int, models: int, seed: int) -> None:
    rng = random.Random(seed)
    benchmark = Benchmark.objects.create(slug="scale", name="Scale")
    criterion = Criterion.objects.get_or_create(
        slug="overall", defaults={"name": "Overall", "levels": {str(i): str(i) for i in range(1, 6)}}
    )[0]
    baseline, *candidates = LanguageModel.objects.bulk_create(
        LanguageModel(slug=f"model-{i}", display_name=f"Model {i}") for i in range(models)
    )
    raters = LanguageModel.objects.bulk_create(
        [LanguageModel(slug=f"person-{i}", display_name=f"Person {i}", is_human=True) for i in range(people)]
        + [LanguageModel(slug=f"judge-{i}", display_name=f"Judge {i}") for i in range(judges - people)]
    )
    # Model judges judge every pair; each person labels a tenth of them.
    pairs_count = max(1, judgments // (judges - people + people // 10 + 1))
    prompts_count = max(1, pairs_count // len(candidates))
    prompts = Prompt.objects.bulk_create(
        (Prompt(benchmark=benchmark, external_id=f"p{i}", text=f"question {i}") for i in range(prompts_count)),
        batch_size=5000,
    )
    base = {
        p.pk: r
        for p, r in zip(
            prompts,
            Response.objects.bulk_create(
                (Response(prompt=p, model=baseline, text="b" * rng.randint(50, 900)) for p in prompts), batch_size=5000
            ),
            strict=True,
        )
    }
    answers = Response.objects.bulk_create(
        (Response(prompt=p, model=m, text="m" * rng.randint(50, 900)) for p in prompts for m in candidates),
        batch_size=5000,
    )
    strength = {m.pk: rng.gauss(0, 1) for m in candidates}

    def rows():
        written = 0
        for index, rater in enumerate(raters):
            share = 0.1 if rater.is_human else 1.0
            gives_probability = not rater.is_human and index % 2 == 0
            for answer in answers:
                if written >= judgments:
                    return
                if share < 1 and rng.random() > share:
                    continue
                won = rng.random() < 1 / (1 + 2.718 ** -strength[answer.model_id])
                verdict = 2 if won else 1  # the baseline is always shown first, as in AlpacaEval's files
                probability = (0.75 if won else 0.25) + rng.uniform(-0.2, 0.2) if gives_probability else None
                written += 1
                yield criterion.pk, rater.pk, base[answer.prompt_id].pk, answer.pk, verdict, probability

    with transaction.atomic():
        insert_rows(Judgment, COLUMNS, rows(), source="import")
    do_rebuild_tallies()
    do_create_judge("detail", JudgeDefinition(spec="heuristic:detail"))  # the judge versions' pages
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")


def pages() -> list[str]:
    prompt = Prompt.objects.filter(benchmark__slug="scale").order_by("pk").values_list("pk", flat=True).first()
    win_rates = "?benchmark=scale&judge=judge-0&criterion=overall&baseline=model-0"
    return [
        "/",
        "/benchmarks/scale/",
        f"/benchmarks/scale/prompts/{prompt}/",
        "/leaderboards/",
        f"/leaderboards/baseline/{win_rates}",
        f"/leaderboards/baseline.csv{win_rates}",
        "/models/model-1/",
        "/judges/",
        f"/judges/{judge_key('judge-0')}/",
        "/judges/corrected-boards/",
        "/judges/pointwise/",
        "/judges/graded/",
        "/judges/report.csv",
        f"/judges/{judge_key('judge-0')}.json",
        "/judges/pointwise.csv",
        "/judge-versions/",
        "/judge-versions/detail/",
        "/judge-versions/detail.json",
    ]


class Workers:
    """The workers, run here on demand: what pages asked for is recorded, then computed in turn."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, object, object]] = []
        outer = self

        class Task:
            def __init__(self, name: str) -> None:
                self.name = name

            def apply_async(self, args=None, kwargs=None, **options):
                outer.asked.append((self.name, args, kwargs))

        from evalhub.dashboards import pairwise, win_rate_boards
        from evalhub.judgelab import report

        win_rate_boards.task_named = Task
        report.task_named = Task
        pairwise.task_named = Task

    def run(self) -> tuple[float, float, int]:
        """(wall, CPU, tasks) of computing everything asked for."""
        from evalhub.celery import task_named

        asked, self.asked = self.asked, []
        wall, cpu = time.perf_counter(), time.process_time()
        for name, args, kwargs in asked:
            result = task_named(name).apply(args=args or (), kwargs=kwargs or {})
            if result.failed():
                raise RuntimeError(f"the worker's {name} failed: {result.traceback}")
        return time.perf_counter() - wall, time.process_time() - cpu, len(asked)


def one_more_judgment(round_: int) -> None:
    """judge-0's verdict on one more pair: one it judged, asked again in the other order."""
    criterion = Criterion.objects.get(slug="overall")
    judge = LanguageModel.objects.get(slug="judge-0")
    pairs = Judgment.objects.filter(judge_model=judge).order_by("pk").values_list("response_id", "response_2_id")
    first, second = pairs[round_]
    with transaction.atomic():
        insert_rows(Judgment, COLUMNS, [(criterion.pk, judge.pk, second, first, 0, None)], source="import")


def visit(client, url: str) -> tuple[float, float, int]:
    if isinstance(client, OverHttp):
        return client.visit(url)
    with CaptureQueriesContext(connection) as captured:
        wall, cpu = time.perf_counter(), time.process_time()
        response = client.get(url)
        if hasattr(response, "streaming_content"):
            b"".join(response.streaming_content)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    # An export answers 503 (Retry-After) while a worker computes a large board: timed all the same.
    assert response.status_code in (200, 503), (url, response.status_code)
    return wall, cpu, len(captured)


NOT_COUNTED = -1  # over HTTP the server's queries are not seen: the in-process run counts them


class OverHttp:
    """The production web server (uvicorn, one process) and a Celery worker on the benchmark's database:
    pages asked over HTTP with a viewer's session, the server's CPU beside each wall time; `run` (the
    workers' part) waits until no refresh is queued or in flight and gives the worker's CPU."""

    def __init__(self) -> None:
        from adjudication_load import Server, session_for  # benchmarks/, beside this script
        from connection_load import start_worker

        settings = connection.settings_dict
        url = f"postgres://{settings['USER']}@{settings['HOST']}:{settings['PORT']}/{settings['NAME']}"
        env = {
            "DATABASE_URL": url,
            "REDIS_URL": os.environ["REDIS_URL"],
            "SECRET_KEY": os.environ["SECRET_KEY"],
            "EVALHUB_DATA_DIR": os.environ["EVALHUB_DATA_DIR"],
            "EVALHUB_ALLOWED_HOSTS": "127.0.0.1",
            "EVALHUB_SSL_REDIRECT": "false",
            "EVALHUB_SECURE_COOKIES": "false",
            "EVALHUB_LOG_LEVEL": "WARNING",
        }
        self.server = Server(env, workers=1)
        self.worker = start_worker(env, concurrency=2)
        import httpx

        self.http = httpx.Client(base_url=self.server.url, cookies={"sessionid": session_for("bench-http", "viewer")})
        self.http.timeout = 600

    def visit(self, url: str) -> tuple[float, float, int]:
        from adjudication_load import cpu_seconds

        cpu, wall = cpu_seconds(self.server.process.pid), time.perf_counter()
        response = self.http.get(url)
        wall, cpu = time.perf_counter() - wall, cpu_seconds(self.server.process.pid) - cpu
        assert response.status_code in (200, 503), (url, response.status_code)
        return wall, cpu, NOT_COUNTED

    def run(self) -> tuple[float, float, int]:
        """(wall, the worker's CPU, refreshes seen) until the queue is empty and no refresh is in flight."""
        import redis
        from adjudication_load import cpu_seconds

        broker = redis.Redis.from_url(os.environ["REDIS_URL"])
        cpu, wall, seen = cpu_seconds(self.worker.pid), time.perf_counter(), set()
        while True:
            flying = {key for key in broker.scan_iter(match="*refreshing*")}
            seen |= flying
            if not flying and not broker.llen("default"):
                break
            time.sleep(0.5)
        return time.perf_counter() - wall, cpu_seconds(self.worker.pid) - cpu, len(seen)

    def close(self) -> None:
        self.http.close()
        self.server.close()
        self.worker.terminate()
        self.worker.wait(timeout=60)


def measure(size: int, args, client, workers: Workers | None) -> dict[str, dict[str, tuple[float, float, int]]]:
    """Every page at this size: asked of `client` in this process, or (`workers` None) over HTTP of the
    production server, whose own worker then does the workers' part."""
    started = time.perf_counter()
    build(size, args.judges, args.people, args.models, args.seed)
    print(
        f"\n{Judgment.objects.count():,} judgments, {args.judges} judges ({args.people} people), "
        f"{args.models} models; built in {time.perf_counter() - started:.0f} s; {machine()}"
    )
    cache.clear()  # before any server starts: the broker's queues share the cache's Redis database
    if workers is None:
        server = OverHttp()
        try:
            return _measured(args, server, server)
        finally:
            server.close()
    return _measured(args, client, workers)


def _measured(args, client, workers) -> dict[str, dict[str, tuple[float, float, int]]]:
    urls = pages()
    found: dict[str, dict[str, tuple[float, float, int]]] = {url: {} for url in urls}
    for url in urls:
        found[url]["first"] = visit(client, url)
    wall, cpu, tasks = workers.run()
    print(f"workers after the first visits: {tasks} task(s), {wall:.1f} s wall, {cpu:.1f} CPU-s")
    for round_ in range(args.rounds):
        one_more_judgment(round_)
        for url in urls:
            changed = visit(client, url)
            warm = visit(client, url)
            for how, value in (("changed", changed), ("warm", warm)):
                found[url].setdefault(how, [])
                found[url][how].append(value)
        wall, cpu, tasks = workers.run()
        print(f"workers after round {round_ + 1}: {tasks} task(s), {wall:.1f} s wall, {cpu:.1f} CPU-s")
    print(f"{'page':<62}{'first s':>9}{'changed p95 s (CPU)':>22}{'warm p95 s (CPU)':>20}{'queries':>12}")
    for url, seen in found.items():
        first = seen["first"]
        line = f"{url[:61]:<62}{first[0]:>9.2f}"
        for how in ("changed", "warm"):
            walls = [w for w, _, _ in seen[how]]
            cpus = [c for _, c, _ in seen[how]]
            line += f"{percentile(walls, 95) / 1000:>12.2f} ({percentile(cpus, 95) / 1000:.2f})".rjust(
                22 if how == "changed" else 20
            )
        queries = sorted({q for _, _, q in seen["changed"]} | {q for _, _, q in seen["warm"]})
        line += f"{'/'.join(str(q) if q != NOT_COUNTED else '—' for q in queries):>12}"
        print(line)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[50_000])
    parser.add_argument("--judges", type=int, default=50)
    parser.add_argument("--people", type=int, default=10)
    parser.add_argument("--models", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--server", action="store_true", help="over HTTP of uvicorn, with a Celery worker")
    args = parser.parse_args()
    if args.server and (connection.vendor != "postgresql" or not os.environ.get("REDIS_URL")):
        parser.error("--server needs PostgreSQL (DATABASE_URL) and Redis (REDIS_URL)")
    setup_test_environment()
    missed, counts = [], []
    for size in args.sizes:
        databases = setup_databases(verbosity=0, interactive=False)
        try:
            viewer = User.objects.create_user("bench-viewer")
            viewer.groups.add(Group.objects.get_or_create(name="viewer")[0])
            client = Client()
            client.force_login(viewer)
            found = measure(size, args, client, None if args.server else Workers())
        finally:
            teardown_databases(databases, verbosity=0)
        for url, seen in found.items():
            for how, bound in (("changed", CHANGED_BOUND_S), ("warm", WARM_BOUND_S)):
                p95 = percentile([w for w, _, _ in seen[how]], 95) / 1000
                if p95 > bound:
                    missed.append(f"{url} {how} p95 {p95:.2f} s at {size:,}")
        counts.append({url: (seen["changed"][-1][2], seen["warm"][-1][2]) for url, seen in found.items()})
    for url in counts[0]:
        if len({c[url] for c in counts}) > 1:
            missed.append(f"{url}: queries (changed, warm) {[c[url] for c in counts]} across the sizes")
    print(
        f"\nbounds: changed p95 ≤ {CHANGED_BOUND_S} s, warm p95 ≤ {WARM_BOUND_S} s, the same queries at every size: "
        + ("met" if not missed else "MISSED: " + "; ".join(missed))
    )
    return 1 if missed else 0


if __name__ == "__main__":
    from measured import reported  # benchmarks/, beside this script

    with reported():
        code = main()
    sys.exit(code)
