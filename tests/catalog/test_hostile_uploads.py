"""Every upload ends in bounded work with a clear answer (issue 78): a field longer than its column is
that row's named problem on every import page and command; a zip's members are checked as a tree and
unpacked counting their real bytes; the JSONL reader skips blank lines in blocks, so a file's cost is
its bytes whatever they hold (its speed is measured in benchmarks/upload_reading.py)."""

from __future__ import annotations

import gzip
import io
import warnings
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from evalhub.catalog import inspect_logs
from evalhub.catalog.models import Judgment, Prompt, Response
from evalhub.core.files import rows
from evalhub.core.files.rows import FileError, read_rows

pytestmark = pytest.mark.django_db

LONG = "c" * 101

BENCHMARK_CSV = f"prompt_id,prompt,category,model,response\r\np1,Question?,{LONG},alpha,Answer\r\n"
LABELS_CSV = (
    "prompt_id,prompt,category,model_a,model_b,response_a,response_b,judge,winner\r\n"
    f"p1,Question?,{LONG},alpha,beta,A,B,human-ann,a\r\n"
)
SCORES_CSV = f"prompt_id,prompt,category,model,response,rater,score\r\np1,Question?,{LONG},alpha,A,human-ann,1\r\n"
PAGES = {
    "/benchmarks/import/": ("bench.csv", BENCHMARK_CSV),
    "/judges/import/": ("labels.csv", LABELS_CSV),
    "/judges/import-scores/": ("scores.csv", SCORES_CSV),
}
COMMANDS = {
    "import_benchmark": ("bench.csv", BENCHMARK_CSV),
    "import_judgments": ("labels.csv", LABELS_CSV),
    "import_scores": ("scores.csv", SCORES_CSV),
}


def post(client, url: str, name: str, data: bytes):
    fields = {"benchmark": "hostile", "task_type": "other", "layout": "auto", "create_models": "on"}
    return client.post(url, {"file": SimpleUploadedFile(name, data), **fields})


def stored() -> tuple[int, int, int]:
    return Prompt.objects.count(), Response.objects.count(), Judgment.objects.count()


@pytest.mark.parametrize("url", list(PAGES))
def test_a_category_longer_than_its_column_is_the_rows_named_problem_on_every_import_page(url, admin_user, login):
    name, text = PAGES[url]
    response = post(login(admin_user), url, name, text.encode())
    assert response.status_code == 400
    assert "line 2" in response.content.decode() and "&#x27;category&#x27; is longer than 100" in (
        response.content.decode()
    )
    assert stored() == (0, 0, 0)


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_category_longer_than_its_column_is_named_by_every_import_command(command, tmp_path, capsys):
    name, text = COMMANDS[command]
    path = tmp_path / name
    path.write_text(text)
    arguments = (
        ["--benchmark", "hostile", "--create-models"] if command != "import_benchmark" else ["--benchmark", "hostile"]
    )
    with pytest.raises(CommandError, match="problem"):
        call_command(command, str(path), *arguments)
    assert "'category' is longer than 100" in capsys.readouterr().err
    assert stored() == (0, 0, 0)


def zipped(members: dict[str, bytes], again: str = "") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # zipfile warns of a name written twice: that is the case made
        for name, data in members.items():
            archive.writestr(name, data)
        if again:
            archive.writestr(again, b"{}")
    return buffer.getvalue()


def lying_about_its_size(stated: int, real: bytes) -> bytes:
    """A zip whose one member says it unpacks to `stated` bytes and unpacks to `real`."""
    data = bytearray(zipped({"logs/a.json": real}))
    central = data.rfind(b"PK\x01\x02")
    data[central + 24 : central + 28] = stated.to_bytes(4, "little")  # the central directory's size
    data[26 - 4 : 26] = stated.to_bytes(4, "little")  # and the local header's
    return bytes(data)


HOSTILE_ZIPS = {
    "a file also used as a folder": (zipped({"a.json": b"{}", "a.json/b.json": b"{}"}), "which the zip also holds"),
    "a folder also used as a file": (zipped({"a.json/b.json": b"{}", "a.json": b"{}"}), "also a folder"),
    "a name twice": (zipped({"x/a.json": b"{}"}, again="x/a.json"), "twice"),
    "a member that lies about its size": (
        lying_about_its_size(10, b"{" + b" " * (3 << 20) + b"}"),
        "cannot be unpacked",
    ),
    "a member that unpacks past the limit": (zipped({"logs/a.json": b" " * (2 << 20)}), "import limit"),
}


@pytest.mark.parametrize("case", list(HOSTILE_ZIPS))
def test_a_hostile_zip_is_refused_with_its_member_named_and_nothing_stored(case, admin_user, login, settings):
    settings.EVALHUB_MAX_IMPORT_BYTES = 1 << 20
    data, reason = HOSTILE_ZIPS[case]
    response = post(login(admin_user), "/judges/import-scores/", "logs.zip", data)
    assert response.status_code == 400, response.content.decode()[:500]
    assert reason in response.content.decode()
    assert stored() == (0, 0, 0)


def test_a_zip_is_unpacked_only_inside_its_folder_and_as_one_tree(tmp_path):
    with pytest.raises(ValueError, match="outside the folder"):
        inspect_logs.unpack_upload("x.zip", zipped({"../a.json": b"{}"}), tmp_path, 1 << 20)
    assert not (tmp_path.parent / "a.json").exists()
    root = inspect_logs.unpack_upload("x.zip", zipped({"set/a.json": b"{}", "set/b/c.json": b"[]"}), tmp_path, 1 << 20)
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*.json")) == ["set/a.json", "set/b/c.json"]


@pytest.mark.parametrize("block", [1, 3, 7, 64, 1 << 20])
def test_the_jsonl_reader_gives_the_same_rows_and_line_numbers_whatever_its_block(block, monkeypatch):
    """Blank runs, a byte order mark, CRLF, a line longer than a block, a last line with no line end."""
    monkeypatch.setattr(rows, "BLOCK", block)
    data = b'\xef\xbb\xbf{"a":1}\n\n  \n\t\n{"b":2}\r\n' + b'{"c":"' + b"x" * 50 + b'"}\n[1]\n\n\n{"d":1}'
    found = [(n, r if isinstance(r, str) else sorted(r)) for n, r in read_rows(data, "jsonl", check_header=None)]
    assert found == [(1, ["a"]), (5, ["b"]), (6, ["c"]), (7, "each line must be a JSON object, not list."), (10, ["d"])]


@pytest.mark.parametrize("block", [1, 5, 1 << 20])
def test_a_line_blank_only_once_decoded_is_skipped_as_before(block, monkeypatch):
    """A lone byte order mark on the first line, or only Unicode spaces, holds nothing: the line reader
    skipped such lines, so the block reader (which looks at bytes) must too."""
    monkeypatch.setattr(rows, "BLOCK", block)
    data = '\ufeff\n{"a":1}\n\u3000\u00a0\n{"b":2}\n'.encode()
    found = [(n, sorted(r)) for n, r in read_rows(data, "jsonl", check_header=None)]
    assert found == [(2, ["a"]), (4, ["b"])]


def test_the_jsonl_reader_names_the_line_and_offset_of_bytes_that_are_not_utf8(monkeypatch):
    monkeypatch.setattr(rows, "BLOCK", 4)
    with pytest.raises(FileError) as refused:
        list(read_rows(b'{"a":1}\n\n{"b":"\xff"}\n', "jsonl", check_header=None))
    assert refused.value.line == 3 and "offset 15" in str(refused.value)


def test_a_gzip_of_blank_lines_reaches_its_answer(admin_user, login, settings):
    settings.EVALHUB_MAX_IMPORT_BYTES = 8 << 20
    response = post(login(admin_user), "/benchmarks/import/", "blank.jsonl.gz", gzip.compress(b"\n" * (4 << 20)))
    assert response.status_code == 400
    assert "no rows" in response.content.decode().lower() or "empty" in response.content.decode().lower()
