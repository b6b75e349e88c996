"""A judgment file read as a stream (the command's file, the page's upload): the same import as its
bytes, every refusal the same, and memory that does not grow with the number of rows."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc

import pytest

from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.actions.judgments import do_import_judgments
from evalhub.catalog.models import Judgment
from evalhub.core.files.judgments import parse_judgment_file
from tests.catalog.test_import_judgments import ALPACA, GENERIC_CSV, MT_BENCH, jsonl

pytestmark = pytest.mark.django_db


def stored() -> list[tuple]:
    return sorted(
        Judgment.objects.values_list(
            "judge_model__slug", "response__model__slug", "response_2__model__slug", "verdict", "probability"
        )
    )


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("labels.csv", GENERIC_CSV.encode()),
        ("mac.csv", GENERIC_CSV.replace("\r\n", "\r").encode()),  # old Mac line ends: a lone carriage return
        ("labels.csv.gz", gzip.compress(GENERIC_CSV.encode())),
        ("mt.jsonl", jsonl(*MT_BENCH)),
        ("annotations.json", json.dumps(ALPACA).encode()),
        ("annotations.jsonl.gz", gzip.compress(jsonl(*ALPACA)) + gzip.compress(b"\n")),  # two gzip members
    ],
)
def test_a_file_read_as_a_stream_imports_as_its_bytes_do(name, data):
    from_bytes = do_import_judgments(filename=name, data=data, benchmark_slug="b", allow_new_models=True)
    as_bytes = stored()
    Judgment.objects.all().delete()
    from_stream = do_import_judgments(filename=name, data=io.BytesIO(data), benchmark_slug="b", allow_new_models=True)
    assert stored() == as_bytes and as_bytes
    assert from_stream.rows == from_bytes.rows
    assert from_stream.counts["judgments_created"] == from_bytes.counts["judgments_created"] == len(as_bytes)
    again = do_import_judgments(filename=name, data=io.BytesIO(data), benchmark_slug="b", allow_new_models=True)
    assert again.counts["judgments_unchanged"] == len(as_bytes), "the same file again changes nothing"


def refusal(name: str, data: bytes, as_stream: bool) -> list[tuple]:
    with pytest.raises(ImportRejected) as rejected:
        source = io.BytesIO(data) if as_stream else data
        do_import_judgments(filename=name, data=source, benchmark_slug="b", allow_new_models=True)
    return [(error.line, error.message) for error in rejected.value.errors]


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("labels.csv", GENERIC_CSV.encode() + b"q3,Why?,gpt-4o,llama-3,\xff,no,ana,a,\r\n", "not valid UTF-8"),
        ("labels.csv.gz", gzip.compress(GENERIC_CSV.encode())[:-12], "is cut short"),
        ("labels.csv.gz", b"not gzip at all", "is not a readable gzip file"),
        ("labels.csv", GENERIC_CSV.encode() + GENERIC_CSV.encode().split(b"\r\n", 2)[2], "the same judge, pair"),
    ],
)
def test_a_stream_is_refused_as_its_bytes_are(name, data, says):
    assert refusal(name, data, as_stream=True) == refusal(name, data, as_stream=False)
    assert says in str(refusal(name, data, as_stream=True))
    assert not Judgment.objects.exists()


def test_a_gzip_stream_that_unpacks_past_the_limit_is_refused(settings):
    settings.EVALHUB_MAX_IMPORT_BYTES = 10_000
    assert "unpacks to over 0.0 MB" in str(refusal("labels.csv.gz", gzip.compress(b"\n" * 50_000), as_stream=True))


def labels_csv(rows: int) -> bytes:
    """A study's shape: 20 models, every pair, 10 judges per pair, a prompt's text on its first row."""
    models = [f"m{n}" for n in range(20)]
    pairs = [(a, b) for i, a in enumerate(models) for b in models[i + 1 :]]
    out = ["prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner"]
    for row in range(rows):
        prompt, rest = divmod(row, len(pairs) * 10)
        (a, b), judge = pairs[rest // 10], f"judge-{rest % 10}"
        text = f"Question {prompt}?" if rest == 0 else ""
        out.append(f"p{prompt},{text},{a},{b},answer {prompt} by {a},answer {prompt} by {b},{judge},{'ab'[row % 2]}")
    return ("\n".join(out) + "\n").encode()


def peak_while_reading(data: bytes, fmt: str = "csv") -> int:
    """The most memory Python held while reading and checking the file as a stream (judgments dropped);
    the file itself is outside it, as a file on disk is."""
    stream = io.BytesIO(data)
    tracemalloc.start()
    try:
        parsed = parse_judgment_file(stream, fmt, known_models=(), allow_new_models=True, on_judgment=id)
        assert parsed.ok, parsed.errors[:3]
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def labels_json(rows: int) -> bytes:
    """`labels_csv`'s rows as one JSON array of records (the .json layout AlpacaEval's files use)."""
    header, *lines = labels_csv(rows).decode().splitlines()
    records = [{k: v for k, v in zip(header.split(","), line.split(","), strict=True) if v} for line in lines]
    return json.dumps(records, indent=1).encode()


def test_reading_a_json_array_keeps_a_few_bytes_a_record_not_the_file():
    """json.loads of the whole file held its text and every record (about 830 bytes a record here); the
    array is now read a record at a time."""
    small, large = labels_json(19_000), labels_json(76_000)
    per_row = (peak_while_reading(large, "json") - peak_while_reading(small, "json")) / 57_000
    assert per_row < 64, f"{per_row:.0f} bytes a row"


def test_reading_a_file_keeps_a_few_bytes_a_row_not_its_records():
    """A record and its key kept per row cost about 500 bytes (5 GB at ten million rows); what is kept
    now is the row's key as two hashes and its line (24 bytes) and each new response once."""
    small, large = labels_csv(19_000), labels_csv(76_000)
    per_row = (peak_while_reading(large) - peak_while_reading(small)) / 57_000
    assert per_row < 64, f"{per_row:.0f} bytes a row"


@pytest.mark.parametrize("at_a_time", [1, 5000])
def test_edited_labels_updated_as_the_file_is_read_count_as_a_recount_does(monkeypatch, at_a_time):
    """Changed labels are updated in batches while the file is read (a file of ten million edits is not
    held as model instances); the counts then equal a recount of the stored labels."""
    from evalhub.catalog.actions import judgments as importing
    from evalhub.catalog.label_counts import imported_counts
    from evalhub.tallies.models import BATTLE_COUNTS, BATTLE_KEY, BattleCount

    monkeypatch.setattr(importing._JudgmentImport, "CHANGED_AT_A_TIME", at_a_time)
    do_import_judgments(filename="l.csv", data=GENERIC_CSV.encode(), benchmark_slug="b", allow_new_models=True)
    edited = GENERIC_CSV.replace("101,100,human-ana,a", "101,100,human-ana,tie").replace(
        ",gpt-4o,b,0.2", ",gpt-4o,a,0.7"
    )
    summary = do_import_judgments(filename="l.csv", data=io.BytesIO(edited.encode()), benchmark_slug="b")
    assert (summary.counts["judgments_replaced"], summary.counts["judgments_unchanged"]) == (2, 2)
    assert Judgment.objects.filter(verdict=0).count() == 1 and Judgment.objects.count() == 4
    rows = BattleCount.objects.values_list(*BATTLE_KEY, *BATTLE_COUNTS)
    kept = {tuple(row[: len(BATTLE_KEY)]): list(row[len(BATTLE_KEY) :]) for row in rows if any(row[len(BATTLE_KEY) :])}
    assert kept == dict(imported_counts())


def peak_while_importing(data: bytes, slug: str = "big") -> int:
    stream = io.BytesIO(data)
    tracemalloc.start()
    try:
        do_import_judgments(filename="l.csv", data=stream, benchmark_slug=slug, allow_new_models=True)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_importing_a_file_again_keeps_a_few_bytes_a_stored_label():
    """Importing a file again compares each row with the stored label of its judge, criterion and pair:
    kept as a dict of tuples that was about 300 bytes a label; as sorted numbers, 24."""
    small, large = labels_csv(19_000), labels_csv(57_000)
    do_import_judgments(filename="l.csv", data=small, benchmark_slug="big", allow_new_models=True)
    before = peak_while_importing(small)
    do_import_judgments(filename="l.csv", data=large, benchmark_slug="big", allow_new_models=True)
    per_row = (peak_while_importing(large) - before) / 38_000
    assert Judgment.objects.count() == 57_000
    assert per_row < 128, f"{per_row:.0f} bytes a row"


def test_a_repeated_row_the_database_refuses_mid_file_is_named_by_its_line():
    """On PostgreSQL a label goes to the server as its row is read, so the server refuses a repeated row
    (the file's own repeat) before the reading has named it: the reading goes on and names it, and
    nothing is stored. A new judge after the repeat makes the import end its COPY there."""
    rows = GENERIC_CSV.rstrip("\r\n").split("\r\n")
    repeated = "\r\n".join([*rows[:3], rows[2], "q2,,gpt-4o,llama-3,101,100,newcomer,a,"]) + "\r\n"
    assert refusal("l.csv", repeated.encode(), as_stream=True) == [
        (4, "the same judge, pair and criterion as on line 3.")
    ]
    assert not Judgment.objects.exists()


def test_a_large_import_takes_the_tables_statistics_again(monkeypatch):
    """Until autovacuum runs, PostgreSQL plans as if the tables were as small as before the load."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from evalhub.catalog.actions import judgments as importing

    if connection.vendor != "postgresql":
        pytest.skip("statistics are PostgreSQL's")
    monkeypatch.setattr(importing._JudgmentImport, "ANALYZE_AFTER", 4)
    with CaptureQueriesContext(connection) as queries:
        do_import_judgments(filename="l.csv", data=GENERIC_CSV.encode(), benchmark_slug="b", allow_new_models=True)
    assert any(query["sql"].startswith("ANALYZE ") for query in queries.captured_queries)
    monkeypatch.setattr(importing._JudgmentImport, "ANALYZE_AFTER", 5)
    with CaptureQueriesContext(connection) as queries:
        do_import_judgments(filename="m.csv", data=GENERIC_CSV.encode(), benchmark_slug="c", allow_new_models=True)
    assert not any(query["sql"].startswith("ANALYZE ") for query in queries.captured_queries), "4 labels: too few"


def test_a_tie_where_neither_is_good_is_unchanged_on_a_second_import_and_changed_when_it_becomes_a_tie():
    """The stored label's values are compared by hash, Arena's "both bad" read by the database itself."""
    first = do_import_judgments(filename="mt.jsonl", data=jsonl(*MT_BENCH), benchmark_slug="b", allow_new_models=True)
    assert first.counts["judgments_created"] == 2
    again = do_import_judgments(filename="mt.jsonl", data=io.BytesIO(jsonl(*MT_BENCH)), benchmark_slug="b")
    assert (again.counts["judgments_unchanged"], again.counts["judgments_replaced"]) == (2, 0)
    edited = [MT_BENCH[0], {**MT_BENCH[1], "winner": "tie"}]
    changed = do_import_judgments(filename="mt.jsonl", data=io.BytesIO(jsonl(*edited)), benchmark_slug="b")
    assert (changed.counts["judgments_unchanged"], changed.counts["judgments_replaced"]) == (1, 1)
    assert not Judgment.objects.filter(metadata__has_key="arena_winner").exists()


def arena_csv(rows: int, conversations: int | None = None, voters: str = "human") -> bytes:
    """Chatbot Arena's shape: a vote a conversation (or `conversations` voted on again and again)."""
    out = ["prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner"]
    for row in range(rows):
        chat = row if conversations is None else row % conversations
        a, b = f"m{chat % 7}", f"m{chat % 7 + 1 + row % 3}"
        out.append(f"c{chat},Chat {chat}?,{a},{b},{a} on {chat},{b} on {chat},{voters}-{row % 50},{'ab'[row % 2]}")
    return ("\n".join(out) + "\n").encode()


@pytest.mark.parametrize("cache", [1, 3, 1 << 17])
def test_response_keys_kept_on_disk_behind_a_small_cache_import_as_a_large_one_does(monkeypatch, cache):
    from evalhub.catalog.actions.judgment_import_state import ResponseIds
    from evalhub.catalog.models import Response

    monkeypatch.setattr(ResponseIds, "CACHE_SIZE", cache)
    data = arena_csv(120, conversations=17)
    do_import_judgments(filename="a.csv", data=data, benchmark_slug="arena", allow_new_models=True)
    labels = Judgment.objects.values_list(
        "response__prompt__external_id", "response_2__prompt__external_id", "response__text", "response_2__text"
    )
    assert len(labels) == 120
    assert all(p == q and a.endswith(f" on {p[1:]}") and b.endswith(f" on {p[1:]}") for p, q, a, b in labels)
    rows = [row.split(",") for row in data.decode().split("\n")[1:-1]]
    assert Response.objects.count() == len({(row[0], model) for row in rows for model in row[2:4]})
    again = do_import_judgments(filename="a.csv", data=data, benchmark_slug="arena")
    assert again.counts["judgments_unchanged"] == 120, "each label found under the same responses"


def test_a_file_of_new_conversations_a_row_imports_in_a_few_bytes_a_vote(monkeypatch):
    """The responses a vote points to were kept in two dicts and their first sights in a third (670 bytes
    a vote on SQLite, 1,150 on PostgreSQL; a million Arena votes peaked past 1 GiB), then on disk behind
    bounded caches: 61 and 306 bytes a vote, from the checker's keys of every response (40), each prompt's
    code for the battle counts and, on PostgreSQL, a set of every key the written labels point to. With
    every buffer and cache made small, what still grows is each row's key as two hashes and its line."""
    import evalhub.system.bulk_insert as bulk_insert
    from evalhub.catalog.actions.judgment_import_state import NewBattles, ResponseIds
    from evalhub.core.files.key_runs import KeyRuns
    from evalhub.core.files.responses_seen import ResponsesSeen

    for cached in (ResponseIds, ResponsesSeen):
        monkeypatch.setattr(cached, "CACHE_SIZE", 1024)
    for owner, name, size in (
        (NewBattles, "SPILL_AT", 1024),
        (NewBattles, "MERGE_EVERY", 4096),
        (KeyRuns, "FOLD_EVERY", 1024),
        (bulk_insert, "GATHER_EVERY", 1024),
    ):
        monkeypatch.setattr(owner, name, size, raising=False)
    # Voters new to each import: on PostgreSQL a judge with labels stored has the file's labels merged
    # on the server, another path (its inserted labels' ids read back to be counted).
    small, large = arena_csv(10_000, voters="human-s"), arena_csv(40_000, voters="human-l")
    do_import_judgments(filename="l.csv", data=arena_csv(10_000), benchmark_slug="warm-up", allow_new_models=True)
    per_row = (peak_while_importing(large, "arena-40k") - peak_while_importing(small, "arena-10k")) / 30_000
    assert Judgment.objects.count() == 10_000 + 10_000 + 40_000
    assert per_row < 32, f"{per_row:.0f} bytes a row"


@pytest.mark.parametrize(("spill_at", "merge_every"), [(1, 1), (2, 3), (5, 2), (1 << 18, 1 << 20)])
def test_battles_put_on_disk_past_a_few_prompts_count_as_a_recount_does(monkeypatch, spill_at, merge_every):
    """A new label's battle is counted from its prompt's code, and past SPILL_AT prompts those codes go to
    disk with their counts: a prompt voted on both sides of a spill counts once per label all the same,
    under its category."""
    from evalhub.catalog.actions.judgment_import_state import NewBattles
    from evalhub.catalog.label_counts import imported_counts
    from evalhub.tallies.models import BATTLE_COUNTS, BATTLE_KEY, BattleCount

    monkeypatch.setattr(NewBattles, "SPILL_AT", spill_at, raising=False)
    monkeypatch.setattr(NewBattles, "MERGE_EVERY", merge_every)
    lines = ["prompt_id,prompt,category,model_a,model_b,response_a,response_b,judge,winner"]
    for row in range(60):
        chat = row % 11  # a conversation voted on again, by other people, further on
        a, b = f"m{chat % 3}", f"m{chat % 3 + 1 + row % 2}"
        winner = ("a", "b", "tie")[row % 3]
        lines.append(f"c{chat},Chat {chat}?,topic-{chat % 4},{a},{b},{a} on {chat},{b} on {chat},p{row},{winner}")
    do_import_judgments(
        filename="a.csv", data=("\n".join(lines) + "\n").encode(), benchmark_slug="arena", allow_new_models=True
    )
    rows = BattleCount.objects.values_list(*BATTLE_KEY, *BATTLE_COUNTS)
    kept = {tuple(row[: len(BATTLE_KEY)]): list(row[len(BATTLE_KEY) :]) for row in rows if any(row[len(BATTLE_KEY) :])}
    assert kept == dict(imported_counts())
    assert sum(sum(counts) for counts in kept.values()) == 60
    assert {key[4] for key in kept} == {f"topic-{n}" for n in range(4)}


def test_a_file_of_many_new_voters_reserves_their_keys_in_blocks_and_each_label_keeps_its_own(monkeypatch):
    """Arena's voters are judges. Each new one had its key reserved alone, which on PostgreSQL ended the
    running COPY and started it again: 50,000 voters took 100,000 votes from 24 to 57 CPU-s."""
    from evalhub.catalog.actions import judgments
    from evalhub.catalog.models import LanguageModel

    reserved: list[tuple[str, int]] = []
    reserve = judgments.reserve_ids

    def counting(model, count, *args, **kwargs):
        reserved.append((model.__name__, count))
        return reserve(model, count, *args, **kwargs)

    monkeypatch.setattr(judgments, "reserve_ids", counting)
    out = ["prompt_id,prompt,model_a,model_b,response_a,response_b,judge,winner"]
    out += [f"c{n},Chat {n}?,m1,m2,one {n},two {n},human-{n},{'ab'[n % 2]}" for n in range(300)]
    summary = do_import_judgments(
        filename="a.csv", data=("\n".join(out) + "\n").encode(), benchmark_slug="voters", allow_new_models=True
    )
    judge_blocks = [count for name, count in reserved if name == "LanguageModel"]
    assert sum(judge_blocks) >= 300 and len(judge_blocks) <= 8, judge_blocks
    assert sum(judge_blocks) < 2 * 300, "few keys reserved and not used"
    assert summary.counts["judges_created"] == 300
    labels = Judgment.objects.values_list("judge_model__slug", "judge_model__is_human", "response__prompt__external_id")
    assert sorted(labels) == sorted((f"human-{n}", True, f"c{n}") for n in range(300))
    assert LanguageModel.objects.filter(slug__startswith="human-").count() == 300
