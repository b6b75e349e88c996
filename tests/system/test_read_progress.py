"""How far an import has read its file is watched from beside it: the furthest offset the descriptor
reached, never backwards when a parser seeks back or a digest reads it again; reported from a thread
until the block ends, with a busy database skipped rather than fatal; the import commands draw it as a
bar of bytes on a terminal, and the exports count their rows, and nothing is drawn into a pipeline's log."""

from __future__ import annotations

import io
import threading

import pytest
from django.core.management import call_command
from django.db import OperationalError

from evalhub.system.read_progress import ReadProgress
from tests.api.test_imports import GOOD


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_furthest_point_read_is_what_counts(tmp_path):
    path = tmp_path / "rows.bin"
    path.write_bytes(bytes(10_000))
    with open(path, "rb", buffering=0) as file:  # unbuffered: the offset is exactly what was read
        progress = ReadProgress(file, lambda read: None)
        file.read(4_000)
        assert progress.look() == 4_000
        file.seek(0)  # a parser seeking back, or the digest's second pass
        file.read(1_000)
        assert progress.look() == 4_000
        file.read()
        assert progress.look() == 10_000


def test_the_thread_reports_while_the_block_reads_and_once_at_its_end(tmp_path):
    path = tmp_path / "rows.bin"
    path.write_bytes(bytes(10_000))
    seen: list[int] = []
    halfway = threading.Event()

    def report(read: int) -> None:
        seen.append(read)
        if read >= 5_000:
            halfway.set()

    with open(path, "rb", buffering=0) as file, ReadProgress(file, report, every=0.01):
        file.read(5_000)
        assert halfway.wait(30)  # held here until the thread has said so: no race with it
        file.read()
    assert seen[-1] == 10_000 and seen == sorted(seen) and 5_000 in seen


def test_a_busy_database_skips_a_report_and_the_next_one_says_it(tmp_path):
    path = tmp_path / "rows.bin"
    path.write_bytes(bytes(100))
    calls: list[int] = []

    def report(read: int) -> None:
        calls.append(read)
        if len(calls) == 1:
            raise OperationalError("database is locked")

    with open(path, "rb", buffering=0) as file, ReadProgress(file, report, every=0.01) as progress:
        file.read()
        while len(calls) < 2:  # the refused figure is reported again at the next look
            progress.join(0.01)
    assert calls[:2] == [100, 100]


def test_bytes_in_memory_start_no_thread():
    with ReadProgress(io.BytesIO(b"abc"), lambda read: pytest.fail("reported")) as progress:
        pass
    assert progress.fd is None and not progress.is_alive()


@pytest.mark.django_db
@pytest.mark.parametrize("command, what", [("import_benchmark", "benchmark"), ("import_judgments", "judgments")])
def test_an_import_draws_the_bytes_it_read_on_a_terminal_only(tmp_path, command, what):
    name, text = GOOD[what]
    path = tmp_path / name
    path.write_text(text)
    arguments = [str(path), "--benchmark", "piped", "--create-models"]
    drawn = Terminal()
    call_command(command, *arguments, stderr=drawn, stdout=io.StringIO())
    assert "0%" in drawn.getvalue() and "100%" in drawn.getvalue() and "B/s" in drawn.getvalue(), drawn.getvalue()
    assert "storing" in drawn.getvalue()  # the file read, its rows being written
    quiet = io.StringIO()
    call_command(command, *arguments, stderr=quiet, stdout=io.StringIO())
    assert quiet.getvalue() == ""


@pytest.mark.django_db
def test_an_export_counts_the_rows_it_writes_on_a_terminal(tmp_path):
    name, text = GOOD["benchmark"]
    (tmp_path / name).write_text(text)
    call_command(
        "import_benchmark", str(tmp_path / name), "--benchmark", "piped", "--create-models", stdout=io.StringIO()
    )
    drawn = Terminal()
    call_command(
        "export_results", "--out", str(tmp_path / "out"), "--table", "responses", stderr=drawn, stdout=io.StringIO()
    )
    assert "piped.responses" in drawn.getvalue() and "1 rows" in drawn.getvalue(), drawn.getvalue()


@pytest.mark.django_db
def test_the_battles_export_counts_its_battles_of_their_total_on_a_terminal(tmp_path):
    name, text = GOOD["judgments"]
    (tmp_path / name).write_text(text)
    call_command(
        "import_judgments", str(tmp_path / name), "--benchmark", "piped", "--create-models", stdout=io.StringIO()
    )
    drawn = Terminal()
    out = tmp_path / "battles.jsonl"
    call_command("export_battles", "--benchmark", "piped", "--out", str(out), stderr=drawn, stdout=io.StringIO())
    assert "battles.jsonl" in drawn.getvalue() and "1/1" in drawn.getvalue(), drawn.getvalue()
