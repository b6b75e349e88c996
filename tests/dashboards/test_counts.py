"""The boards' counts (issue 23): kept as verdicts are written, equal to counting from scratch, and
the boards made from them equal to the boards made from every verdict."""

from __future__ import annotations

import json
import random
import threading
from collections import Counter

import pytest
from django.db import DatabaseError, connection, transaction
from django.test.utils import CaptureQueriesContext

from evalhub.adjudication.actions import do_override
from evalhub.adjudication.models import AdjudicationItem
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.demo import do_load_demo
from evalhub.catalog.models import Benchmark, Criterion, LanguageModel
from evalhub.core.scaleeval.debate import DebateOutcome
from evalhub.core.statistics import bradley_terry as bt
from evalhub.core.statistics.agreement import coverage, judged_pairs, position_flip_rate, system_agreement, unswap
from evalhub.dashboards.counts import do_rebuild_tallies, fresh
from evalhub.dashboards.judges import judges_board
from evalhub.dashboards.pairwise import pairwise_board
from evalhub.debates import verdict_counts
from evalhub.debates.actions import do_create_judge_run, do_create_run, do_finish_debates
from evalhub.debates.models import CountedDebate, Debate, JudgeRun, JudgeVerdict
from evalhub.debates.verdict_counts import MAJORITY_KEY, MAJORITY_VALUES, do_recount_debates, do_recount_judge_run
from evalhub.reads.battles import SOURCES, Filters, load_battles
from evalhub.reads.caching import fingerprint
from evalhub.reads.verdicts import judge_run_majorities
from evalhub.tallies.models import BATTLE_COUNTS, BATTLE_KEY, JUDGE_COUNTS, JUDGE_KEY, BattleCount, JudgeTally
from tests.conftest import make_user
from tests.worker_threads import WorkerThreads

pytestmark = pytest.mark.django_db(transaction=True)  # the judge runs' chunks commit as they would in a worker

LABELS = (
    "prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner\r\n"
    "q1,Is 221 prime?,demo-thorough,demo-terse,No: 13 x 17.,Yes.,human-ana,a\r\n"
    "q1,,demo-thorough,demo-terse,No: 13 x 17.,Yes.,gpt-4o,tie\r\n"
    "q2,Name a prime above 100.,demo-terse,demo-sloppy,101,100,human-ana,b\r\n"
)


def snapshot() -> tuple[dict, dict]:
    """The counts, non-zero rows only (a count taken back to zero may keep its row)."""
    battles = {
        tuple(getattr(row, f) for f in BATTLE_KEY): tuple(getattr(row, f) for f in BATTLE_COUNTS)
        for row in BattleCount.objects.all()
        if row.wins_a or row.wins_b or row.ties
    }
    judges = {
        tuple(getattr(row, f) for f in JUDGE_KEY): (*(getattr(row, f) for f in JUDGE_COUNTS), round(row.latency_s, 6))
        for row in JudgeTally.objects.all()
        if row.calls or row.judged
    }
    return battles, judges


@pytest.fixture
def arena(db):
    do_load_demo()
    benchmark, criterion = Benchmark.objects.get(slug="demo"), Criterion.objects.get(slug="helpfulness")
    models = [LanguageModel.objects.get(slug=slug) for slug in ("demo-thorough", "demo-terse", "demo-sloppy")]
    runs = [
        do_create_run(
            name=f"{a.slug} vs {b.slug}",
            benchmark=benchmark,
            criterion=criterion,
            model_a=a,
            model_b=b,
            agents=["heuristic"],
        )
        for a, b in ((models[0], models[1]), (models[1], models[2]), (models[0], models[2]))
    ]
    return runs


def play(runs, rng: random.Random) -> None:
    """A random sequence of what writes verdicts: debates settling or going to people, single judges
    (k samples, both orders, criteria variants, privileged information), people's verdicts and
    overrides, and imported labels, interleaved."""
    admin = make_user("admin-x", "admin")
    debates = list(Debate.objects.filter(run__in=runs).order_by("id"))
    rng.shuffle(debates)
    for index, debate in enumerate(debates):
        verdict = rng.choice([0, 1, 2, None, None])
        do_finish_debates([(debate, DebateOutcome(verdict=verdict, rounds_used=1, turns=[]))])
        if index % 5 == 4:
            run = rng.choice(runs)
            do_create_judge_run(
                reference=run,
                judge=rng.choice(["heuristic", "heuristic:concise"]),
                criteria_variant=rng.choice(["original", "original", "masked"]),
                privileged_sources=rng.choice([[], ["reference_answer"]]),
                samples=rng.choice([1, 3]),
                temperature=0.7,
                check_position=rng.random() < 0.5,
            )
        items = list(AdjudicationItem.objects.filter(resolved_at__isnull=True))
        if items and rng.random() < 0.4:
            do_override(admin, rng.choice(items).pk, rng.choice([0, 1, 2]), "settled by the test")
        resolved = list(AdjudicationItem.objects.filter(resolved_at__isnull=False))
        if resolved and rng.random() < 0.2:
            do_override(
                admin, rng.choice(resolved).pk, rng.choice([0, 1, 2]), "changed its mind"
            )  # an override of an override
        if index == len(debates) // 2:
            do_import_judgments(
                filename="labels.csv", data=LABELS.encode(), benchmark_slug="demo", allow_new_models=True
            )
    do_import_judgments(
        filename="labels.csv", data=LABELS.replace("human-ana,b", "human-ana,a").encode(), benchmark_slug="demo"
    )  # a changed label replaces its row


@pytest.mark.parametrize("seed", [1, 2])
def test_the_counts_kept_as_verdicts_land_equal_a_count_from_scratch(arena, seed):
    play(arena, random.Random(seed))
    kept = snapshot()
    assert kept[0], "the sequence produced battles"
    assert any(key[2] == "single_judge" for key in kept[0])
    assert any(key[2] == "human" for key in kept[0])
    assert any(key[2].startswith("imported") for key in kept[0])
    assert kept[1], "and judge tallies"
    do_rebuild_tallies()
    assert snapshot() == kept


def test_a_deletion_marks_the_counts_stale_and_the_next_read_counts_without_it(arena):
    play(arena, random.Random(3))
    JudgeRun.objects.order_by("id").first().delete()
    Debate.objects.filter(status="consensus").order_by("id").first().delete()
    fresh()  # what the next board read does
    after = snapshot()
    do_rebuild_tallies()
    assert snapshot() == after
    board = pairwise_board(Filters(sources=tuple(SOURCES)), fingerprint())
    assert board["battles"] == len(load_battles(fingerprint(), with_judges=True))


def test_a_board_from_the_counts_has_the_ratings_and_intervals_of_one_made_from_every_battle(arena):
    play(arena, random.Random(4))
    for sources in (("consensus", "human"), tuple(SOURCES)):
        filters = Filters(sources=sources)
        board = pairwise_board(filters, fingerprint(), rounds=50, seed=7)
        battles = [b.opponent_pair for b in load_battles(fingerprint(), filters.with_judges) if filters.keep(b)]
        expected = bt.leaderboard(battles, rounds=50, seed=7)
        assert board["ratings"] == [r.as_dict() for r in expected.ratings]  # identical, not approximately
        assert board["battles"] == len(battles)


def test_the_judges_board_from_the_counts_equals_the_agreement_computed_from_every_verdict(arena):
    play(arena, random.Random(5))
    rows = {row["judge"]: row for row in judges_board(fingerprint())["judges"]}
    runs = judge_run_majorities(fingerprint())
    settled = Debate.objects.filter(status__in=["consensus", "adjudicated"])
    references = {run: {} for run in Debate.objects.values_list("run_id", flat=True).distinct()}
    for debate, run, verdict in settled.values_list("id", "run_id", "verdict"):
        references[run][debate] = verdict
    expected: dict[tuple, list[int]] = {}
    flips: Counter = Counter()
    systems: dict[tuple, list[int]] = {}
    covered: dict[tuple, list[int]] = {}
    for run in runs.values():
        reference = {
            d: v for d, v in references.items() if Debate.objects.filter(pk=d, run_id=run["reference_id"]).exists()
        }
        ids, predicted, truth = judged_pairs(run["same"], reference)
        key = (run["judge"], run["criteria_variant"], bool(run["privileged_sources"]))
        cell = expected.setdefault(key, [0, 0])
        cell[0] += sum(p == t for p, t in zip(predicted, truth, strict=True))
        cell[1] += len(ids)
        answered = coverage(run["same"], reference)
        covered.setdefault(key, [0, 0])
        covered[key][0] += answered.hits
        covered[key][1] += answered.total
        agrees = system_agreement(predicted, truth) if predicted else None
        if agrees is not None:
            systems.setdefault(key, [0, 0])
            systems[key][0] += agrees
            systems[key][1] += 1
        if run["check_position"]:
            paired = [d for d in run["same"] if d in run["reversed"]]
            rate = position_flip_rate([run["same"][d] for d in paired], [unswap(run["reversed"][d]) for d in paired])
            flips[(run["judge"], "hits")] += rate.hits
            flips[(run["judge"], "total")] += rate.total
    assert expected, "the sequence ran judges"
    for (judge, variant, privileged), (hits, total) in expected.items():
        if not total:
            continue
        row = rows[judge]
        if variant == "original":
            agreement = row["agreement"]["privileged" if privileged else "plain"]
            assert (agreement["example"]["hits"], agreement["example"]["total"]) == (hits, total)
            assert (agreement["coverage"]["hits"], agreement["coverage"]["total"]) == tuple(
                covered[(judge, variant, privileged)]
            )
            system = systems.get((judge, variant, privileged))
            assert (agreement["system"] and (agreement["system"]["agrees"], agreement["system"]["runs"])) == (
                tuple(system) if system else None
            )
        if not privileged:
            assert (row["robustness"][variant]["hits"], row["robustness"][variant]["total"]) == (hits, total)
    for judge in {judge for judge, _ in flips}:
        total = flips[(judge, "total")]
        assert (rows[judge]["flips"] or {}).get("total", 0) == total
        assert (rows[judge]["flips"] or {}).get("hits", 0) == (flips[(judge, "hits")] if total else 0)


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks are what is tested: DATABASE_URL=postgres://…")
def test_debates_settling_at_the_same_moment_in_many_workers_are_all_counted(arena):
    """Eight workers each settle a debate of the same pair at once: every win lands in the one
    shared count (an increment lost to a race would leave fewer), and nobody deadlocks."""
    debates = list(Debate.objects.filter(run=arena[0]).order_by("id")[:8])
    start = threading.Barrier(len(debates))

    def settle(debate: Debate) -> None:
        start.wait()
        do_finish_debates([(debate, DebateOutcome(verdict=1, rounds_used=1, turns=[]))])

    workers = WorkerThreads()
    for debate in debates:
        workers.start(settle, debate)
    workers.join()
    counted = BattleCount.objects.filter(source="consensus")
    assert sum(row.wins_a + row.wins_b + row.ties for row in counted) == len(debates)
    kept = snapshot()
    do_rebuild_tallies()
    assert snapshot() == kept


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks are what is tested: DATABASE_URL=postgres://…")
def test_a_judge_runs_chunk_that_waited_for_its_debates_lock_counts_what_the_holder_committed(arena):
    """A debate settles (its reference is set, and its counts) while a judge run's chunk on it waits for
    its lock. The chunk must count against what the settling committed: it read the counts in the same
    statement as its lock, and PostgreSQL then returns the rows of the statement's start (a row lock
    waited on refreshes the locked row only), so the judge's verdict was counted as if unsettled."""
    debate = Debate.objects.filter(run=arena[0]).order_by("id").first()
    do_recount_debates([debate.pk])  # counted, unsettled
    judge_run = JudgeRun.objects.create(reference=arena[0], judge="heuristic:race", samples=1)
    holding, release = threading.Event(), threading.Event()

    def settle() -> None:
        try:
            with transaction.atomic():
                do_finish_debates([(debate, DebateOutcome(verdict=1, rounds_used=1, turns=[]))])
                holding.set()
                release.wait(20)
        finally:
            holding.set()

    def judge() -> None:
        with transaction.atomic():  # as the runner writes a chunk
            JudgeVerdict.objects.create(
                judge_run=judge_run, debate=debate, reversed_order=False, sample=0, text="…", verdict=1
            )
            do_recount_judge_run(judge_run, [debate.pk])

    workers = WorkerThreads()
    workers.start(settle)
    holding.wait(20)
    judging = workers.start(judge)
    for _ in range(200):  # until the chunk waits for the debate's lock
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'")
            if cursor.fetchone()[0]:
                break
        judging.join(0.05)
    release.set()
    workers.join(30)
    kept = snapshot()
    do_rebuild_tallies()
    assert snapshot() == kept


@pytest.mark.skipif(connection.vendor != "postgresql", reason="row locks are what is tested: DATABASE_URL=postgres://…")
def test_a_chunk_with_a_debate_never_counted_holds_every_debates_lock_before_counting_it(arena, monkeypatch):
    """Every writer locks debates in id order, so none waits for a debate while holding a later one. A
    chunk that locked only its counted debates with their counted rows (one statement, tried) and then
    the others to count them could wait in a cycle with a settle of the same debates: it held a later
    debate while waiting for an earlier one the settle held."""
    debates = list(Debate.objects.filter(run=arena[0]).order_by("id").values_list("pk", flat=True)[:3])
    do_recount_debates([debates[0], debates[2]])  # the middle one was never counted
    judge_run = JudgeRun.objects.create(reference=arena[0], judge="heuristic:gap", samples=1)
    JudgeVerdict.objects.bulk_create(
        JudgeVerdict(judge_run=judge_run, debate_id=pk, reversed_order=False, sample=0, text="…", verdict=1)
        for pk in debates
    )
    probed: list[bool] = []
    whole_recount = verdict_counts.do_recount_debates

    def counting_the_rest(ids) -> None:  # the chunk's way to count a debate never counted
        def probe() -> None:
            try:
                with transaction.atomic():
                    list(Debate.objects.select_for_update(nowait=True).filter(pk=debates[1]))
                probed.append(False)
            except DatabaseError:
                probed.append(True)  # the chunk holds it already

        workers = WorkerThreads()
        workers.start(probe)
        workers.join(30)
        whole_recount(ids)

    monkeypatch.setattr(verdict_counts, "do_recount_debates", counting_the_rest)
    with transaction.atomic():
        do_recount_judge_run(judge_run, debates)
    assert probed == [True]
    kept = snapshot()
    do_rebuild_tallies()
    assert snapshot() == kept


def test_a_judge_runs_chunk_recounts_only_its_own_majorities_and_still_equals_a_count_from_scratch(arena, monkeypatch):
    play(arena, random.Random(3))
    from evalhub.debates import verdict_counts

    def whole_recount(ids):
        raise AssertionError("a judge run's chunk recounted every judge's verdicts on its debates")

    monkeypatch.setattr(verdict_counts, "do_recount_debates", whole_recount)
    monkeypatch.setattr("evalhub.debates.judging.do_recount_debates", whole_recount, raising=False)
    written = []
    real = verdict_counts.do_add_judge_tallies
    monkeypatch.setattr(verdict_counts, "do_add_judge_tallies", lambda deltas: written.append(deltas) or real(deltas))
    for run, samples in ((arena[0], 3), (arena[1], 1)):
        do_create_judge_run(
            reference=run, judge="heuristic:detail", samples=samples, temperature=0.7, check_position=True
        )
    assert written, "the chunks were counted by the narrow recount"
    kept = snapshot()
    monkeypatch.undo()
    do_rebuild_tallies()
    assert snapshot() == kept


def test_a_judge_runs_chunk_keeps_its_counts_in_the_same_few_statements_whatever_its_size(arena):
    """A chunk's bookkeeping is one statement that locks its debates, one that reads how they and the
    run's majorities are counted and its verdicts, and its upserts (one statement on PostgreSQL), however
    many debates, scenarios and battle kinds it touches: an UPDATE (and a savepointed INSERT) per count row
    and an ORM query per step made it several times the verdicts' own write (the scale issue). On
    PostgreSQL each statement carries its ids and rows as arrays, one parameter per column whatever the
    chunk's size: psycopg splits a statement's placeholders with a regular expression on every call
    unless the statement is short enough to cache (VALUES lists of ~300 were a quarter of the work)."""
    play(arena, random.Random(3))
    debates = list(Debate.objects.filter(run=arena[0]).select_related("prompt").order_by("id"))
    assert len({debate.prompt.category for debate in debates}) >= 2, "the chunk spans several scenarios"
    statements, parameters = {}, {}

    def count_parameters(execute, sql, params, many, context):
        parameters.setdefault(size, []).append(len(params or ()))
        return execute(sql, params, many, context)

    for size in (1, len(debates)):
        run = JudgeRun.objects.create(reference=arena[0], judge=f"heuristic:{size}", samples=2, check_position=True)
        chunk = debates[:size]
        JudgeVerdict.objects.bulk_create(
            JudgeVerdict(judge_run=run, debate=debate, reversed_order=order, sample=sample, text="…", verdict=verdict)
            for debate in chunk
            for order in (False, True)
            for sample, verdict in enumerate(((debate.pk + order) % 3, debate.pk % 3))
        )
        with (
            transaction.atomic(),  # the chunk's transaction
            CaptureQueriesContext(connection) as queries,
            connection.execute_wrapper(count_parameters),
        ):
            do_recount_judge_run(run, [debate.pk for debate in chunk])
        statements[size] = [query["sql"].split()[0] for query in queries.captured_queries]
        statements[size] = [word for word in statements[size] if word not in ("SAVEPOINT", "RELEASE")]
    # PostgreSQL: its lock, its read and one statement for its three upserts (battles, judges' tallies,
    # majorities: half a millisecond each was round trip and per-statement work). SQLite, where the
    # transaction holds the whole database: its read and an upsert per table.
    if connection.vendor == "postgresql":
        assert statements[len(debates)] == ["SELECT", "SELECT", "WITH"], statements
    else:
        assert statements[len(debates)] == ["SELECT", "INSERT", "INSERT", "INSERT"], statements
    assert len(statements[1]) <= len(statements[len(debates)])
    if connection.vendor == "postgresql":  # one per column of each table written, whatever the chunk's size
        widths = len(BATTLE_KEY + BATTLE_COUNTS) + len(JUDGE_KEY + verdict_counts.JUDGE_FIELDS)
        widths += len(MAJORITY_KEY + MAJORITY_VALUES)
        assert max(parameters[len(debates)]) <= widths and len(debates) > 10, parameters
    kept = snapshot()
    do_rebuild_tallies()
    assert snapshot() == kept


def test_a_recount_locks_and_reads_its_debates_in_one_statement(arena):
    """A recount reads its debates once, under their lock (the lock and the read were two statements:
    one round trip more for every debate that settles and every person's verdict)."""
    debate = Debate.objects.filter(run=arena[0]).order_by("id").first()
    do_finish_debates([(debate, DebateOutcome(verdict=1, rounds_used=1, turns=[]))])
    Debate.objects.filter(pk=debate.pk).update(verdict=2, winner="b")  # as an override would change it
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        do_recount_debates([debate.pk])
    reads = [query["sql"] for query in queries.captured_queries if 'FROM "debates_debate"' in query["sql"]]
    assert len(reads) == 1, reads
    if connection.features.has_select_for_update:
        assert "FOR UPDATE" in reads[0]
    kept = snapshot()
    do_rebuild_tallies()
    assert snapshot() == kept


@pytest.mark.skipif(connection.vendor != "postgresql", reason="a PostgreSQL plan")
def test_a_judge_runs_chunk_reads_its_debates_counted_rows_by_key_not_every_counted_debate(arena):
    """The chunk's read of its counts named its ids for the debates only; PostgreSQL does not carry an IN
    list across a join's equality and hashed every counted debate to join the chunk's few (a sequential
    scan or a whole index walked, so a chunk's cost grew with every debate ever counted)."""
    play(arena, random.Random(3))
    CountedDebate.objects.bulk_create(
        CountedDebate(
            debate_id=10**6 + n,
            run_id=0,
            model_a="a",
            model_b="b",
            criterion="c",
            scenario="s",
            benchmark="b",
            responses="1-2",
        )
        for n in range(20_000)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE debates_counteddebate, debates_debate, debates_judgemajority")
    debates = list(Debate.objects.filter(run=arena[0]).order_by("id").values_list("pk", flat=True))
    run = JudgeRun.objects.create(reference=arena[0], judge="heuristic:plan")
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        do_recount_judge_run(run, debates)
    read = next(query["sql"] for query in queries.captured_queries if 'JOIN "debates_counteddebate"' in query["sql"])
    with connection.cursor() as cursor:
        cursor.execute("EXPLAIN (FORMAT JSON) " + read)
        plan = cursor.fetchone()[0]
    plan = json.loads(plan) if isinstance(plan, str) else plan

    def nodes(node: dict):
        yield node
        for child in node.get("Plans", []):
            yield from nodes(child)

    scans = [node for node in nodes(plan[0]["Plan"]) if node.get("Relation Name") == "debates_counteddebate"]
    # Each scan of the counted rows reads the chunk's few, not the 20,000 (a sequential scan, or a whole
    # index walked for a merge join, is what the plan was before).
    assert scans and all(node["Plan Rows"] <= 10 * len(debates) for node in scans), scans
