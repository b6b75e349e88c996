"""A score file read as a stream (the command's file, the page's upload): the same import as its bytes,
every refusal the same, and memory that grows with the file's responses, not its rows."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import re
import tracemalloc

import pytest

from evalhub.catalog.actions import scores as importing
from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.actions.scores import check_score_file, do_import_scores
from evalhub.catalog.models import DataImport, Judgment
from evalhub.core.files.scores import parse_score_file
from tests.catalog.test_import_scores import inspect_log, jsonl, rows

pytestmark = pytest.mark.django_db


def stored() -> list[tuple]:
    return sorted(
        Judgment.objects.values_list("judge_model__slug", "response__model__slug", "criterion__slug", "score")
    )


def imported(name: str, data: bytes, *, as_stream: bool, slug: str = "summaries"):
    source = io.BytesIO(data) if as_stream else data
    parsed = check_score_file(name, source, allow_new_models=True)
    return do_import_scores(parsed=parsed, filename=name, data=source, benchmark_slug=slug)


def scores_csv(count: int) -> bytes:
    """A study's shape: every response scored by 20 raters, the prompt's text on its first row."""
    out = ["prompt_id,prompt,model,response,rater,criterion,score"]
    for row in range(count):
        response, rater = divmod(row, 20)
        prompt, model = divmod(response, 4)
        text = f"Summarise {prompt}" if row % 80 == 0 else ""
        out.append(f"p{prompt},{text},m{model},answer {prompt} by m{model},rater-{rater},coherence,{row % 5 + 1}")
    return ("\n".join(out) + "\n").encode()


@pytest.mark.parametrize(
    ("name", "data"),
    [("scores.jsonl", jsonl(rows())), ("scores.csv.gz", gzip.compress(scores_csv(400)))],
)
def test_a_score_file_read_as_a_stream_imports_as_its_bytes_do(name, data):
    from_bytes = imported(name, data, as_stream=False)
    as_bytes = stored()
    Judgment.objects.all().delete()
    from_stream = imported(name, data, as_stream=True)
    assert stored() == as_bytes
    assert as_bytes
    assert from_stream.counts["scores_created"] == from_bytes.counts["scores_created"] == len(as_bytes)
    assert imported(name, data, as_stream=True).counts["scores_unchanged"] == len(as_bytes)


def refusal(data: bytes, *, as_stream: bool) -> list[tuple]:
    with pytest.raises(ImportRejected) as rejected:
        imported("scores.csv", data, as_stream=as_stream)
    return [(error.line, error.message) for error in rejected.value.errors]


def test_a_repeated_score_is_refused_by_its_line_from_a_stream_as_from_bytes():
    lines = scores_csv(40).split(b"\n")
    data = b"\n".join([*lines[:5], lines[3], *lines[5:]])
    assert refusal(data, as_stream=True) == refusal(data, as_stream=False)
    assert refusal(data, as_stream=True) == [(6, "the same rater, response and criterion as on line 4.")]
    assert not Judgment.objects.exists()


def peak_while_reading(data: bytes) -> int:
    """The most memory Python held while reading and checking the file as a stream; the file itself is
    outside it, as a file on disk is."""
    stream = io.BytesIO(data)
    tracemalloc.start()
    try:
        parsed = parse_score_file(stream, "csv", known_models=(), allow_new_models=True)
        assert parsed.ok, parsed.errors[:3]
        assert len(parsed.scores) == data.count(b"\n") - 1
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_reading_a_score_file_keeps_a_few_bytes_a_row_not_its_records():
    """A record and its key kept per row cost about 400 bytes (4 GB at ten million rows); what is kept
    now is the row's key as two hashes and its line, the record on disk, and each response once."""
    small, large = scores_csv(16_000), scores_csv(64_000)
    per_row = (peak_while_reading(large) - peak_while_reading(small)) / 48_000
    assert per_row < 96, f"{per_row:.0f} bytes a row"


@pytest.mark.parametrize("at_a_time", [1, 5000])
def test_edited_scores_updated_as_they_are_read_count_as_a_recount_does(monkeypatch, at_a_time):
    """Stored scores are looked up and changed ones written a batch at a time (a file of ten million
    edits is not held as model instances); the counts equal a recount of what is stored."""
    monkeypatch.setattr(importing, "LOOKUP_BATCH", at_a_time)
    monkeypatch.setattr(importing, "CHANGED_BATCH", at_a_time)
    data = scores_csv(400)
    imported("s.csv", data, as_stream=True)
    lines = data.decode().split("\n")
    edited = "\n".join(
        [lines[0], *(f"{line[:-1]}9" if number % 7 == 0 else line for number, line in enumerate(lines[1:-1]))]
    )
    summary = imported("s.csv", edited.encode(), as_stream=True)
    changed = len(range(0, 400, 7))
    assert (summary.counts["scores_changed"], summary.counts["scores_unchanged"]) == (changed, 400 - changed)
    assert Judgment.objects.filter(score=9).count() == changed
    assert Judgment.objects.count() == 400


def peak_while_importing(data: bytes) -> int:
    tracemalloc.start()
    try:
        parsed = check_score_file("s.csv", data, allow_new_models=True)
        do_import_scores(parsed=parsed, filename="s.csv", data=data, benchmark_slug="big")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_importing_a_score_file_again_keeps_a_few_bytes_a_stored_score():
    """Each row is compared with the stored score of its rater, criterion and response. The file's records
    and the stored scores as a dict of tuples cost about 600 bytes a row (9eb1669); now a row's key and
    a stored score's three numbers, with a part of the stored rows fetched at a time: about 100."""
    small, large = scores_csv(16_000), scores_csv(48_000)
    imported("s.csv", small, as_stream=False, slug="big")
    before = peak_while_importing(small)
    imported("s.csv", large, as_stream=False, slug="big")
    per_row = (peak_while_importing(large) - before) / 32_000
    assert Judgment.objects.count() == 48_000
    assert per_row < 128, f"{per_row:.0f} bytes a row"


def peak_while_importing_logs(path) -> int:
    from django.core.management import call_command

    tracemalloc.start()
    try:
        call_command("import_scores", str(path), "--create-models", "--benchmark", path.stem, stdout=io.StringIO())
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("suffix", [".eval", ".json"])
def test_an_inspect_log_is_read_a_sample_at_a_time(tmp_path, suffix):
    """An agent's samples carry their transcripts (here 40 kB each). Inspect's whole-log reader held every
    sample at once: about 50 kB a sample of a `.eval` log, 88 kB of a `.json` one. Both are now read a
    sample at a time, and what grows is a sample's place and id (about 1.5 kB here)."""
    for count in (1, 40, 200):
        samples = {f"q{i}": {"match": "C"} for i in range(count)}
        inspect_log(tmp_path / f"{count}{suffix}", samples, transcript=40_000)
    peak_while_importing_logs(
        tmp_path / f"1{suffix}"
    )  # what the command imports once (its pages' URLs) is not measured
    per_sample = (
        peak_while_importing_logs(tmp_path / f"200{suffix}") - peak_while_importing_logs(tmp_path / f"40{suffix}")
    ) / 160
    assert Judgment.objects.count() == 241
    assert per_sample < 4_000, f"{per_sample:.0f} bytes a sample"


def imported_as_written(tmp_path, count: int, rewrite) -> tuple[list[tuple], list[tuple]]:
    """A `.json` log of `count` samples imported as written and as `rewrite` turns its text: the two
    imports' (prompt, score) pairs."""
    from django.core.management import call_command

    inspect_log(tmp_path / "plain.json", {f"q{i}": {"match": i / 4} for i in range(count)})
    (tmp_path / "rewritten.json").write_text(rewrite((tmp_path / "plain.json").read_text()))
    pairs = {}
    for name in ("plain", "rewritten"):
        call_command("import_scores", str(tmp_path / f"{name}.json"), "--create-models", "--benchmark", name)
        stored = Judgment.objects.filter(response__prompt__benchmark__slug=name)
        pairs[name] = sorted(stored.values_list("response__prompt__external_id", "score"))
    return pairs["plain"], pairs["rewritten"]


def test_a_json_log_past_what_ijson_reads_is_read_whole_from_the_sample_it_stopped_at(tmp_path):
    """A guard: Python's JSON (and so Inspect's writer) allows NaN, which ijson refuses; Inspect's
    whole-log reader takes over from there, and the import is the same as the log's without it."""

    def with_nan(text: str) -> str:
        marked, count = re.subn(r'("explanation":\s*"match on q2")', r'\1, "metadata": {"drift": NaN}', text)
        assert count == 1
        return marked

    plain, rewritten = imported_as_written(tmp_path, 5, with_nan)
    assert len(rewritten) == 5 and rewritten == plain


def test_a_json_log_whose_keys_another_tool_sorted_imports_as_the_log_itself(tmp_path):
    """Inspect's header reader stops at `samples`; `jq -S` puts `version` after it, so the header read
    failed and the log was refused (since ac1ccc3: read whole before). Such a log is read whole again."""
    plain, rewritten = imported_as_written(tmp_path, 3, lambda text: json.dumps(json.loads(text), sort_keys=True))
    assert len(rewritten) == 3 and rewritten == plain


def test_a_folder_of_inspect_logs_is_recorded_by_the_digest_of_its_files_in_order(tmp_path):
    from django.core.management import call_command

    logs = tmp_path / "logs"
    logs.mkdir()
    inspect_log(logs / "a.eval", {"q1": {"match": "C"}, "q2": {"match": "I"}})
    inspect_log(logs / "b.json", {"q3": {"match": 1}}, task="other")
    call_command("import_scores", str(logs), "--create-models", stdout=io.StringIO())
    files = b"".join(path.read_bytes() for path in (logs / "a.eval", logs / "b.json"))
    assert DataImport.objects.get().sha256 == hashlib.sha256(files).hexdigest()
    assert Judgment.objects.count() == 3
