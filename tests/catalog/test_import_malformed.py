"""Files that once crashed the import: each is refused naming its line and the reason, and nothing is written."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.actions.importing import ImportRejected
from tests.catalog.test_import import table_sizes
from tests.core.files.test_benchmarks_properties import rows

pytestmark = pytest.mark.django_db

GOOD = b'{"prompt_id": "q1", "prompt": "Is 221 prime?", "model": "alpha", "response": "No."}\n'


def parquet(**columns) -> bytes:
    buffer = io.BytesIO()
    pd.DataFrame({"prompt_id": ["q1", "q2"], "prompt": ["p1", "p2"], **columns}).to_parquet(buffer)
    return buffer.getvalue()


# name → (file name, bytes, the line or row named, a fragment of the reason)
MALFORMED = {
    "deeply nested JSON": (
        "f.jsonl",
        GOOD + b'{"prompt_id": "q2", "prompt": "p", "metadata": {"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}}\n",
        2,
        "nested",
    ),
    "JSON nested deeper than the database keeps": (
        "f.jsonl",
        GOOD + b'{"prompt_id": "q2", "prompt": "p", "metadata": {"a": ' + b"[" * 500 + b"]" * 500 + b"}}\n",
        2,
        "nested",
    ),
    "a 5,000-digit id": ("f.jsonl", GOOD + b'{"prompt_id": ' + b"7" * 5000 + b', "prompt": "p"}\n', 2, "digits"),
    "a 5,000-digit number in metadata": (
        "f.jsonl",
        GOOD + b'{"prompt_id": "q2", "prompt": "p", "metadata": {"n": ' + b"7" * 5000 + b"}}\n",
        2,
        "digits",
    ),
    "a NUL byte in JSONL text": ("f.jsonl", GOOD + b'{"prompt_id": "q2", "prompt": "a\\u0000b"}\n', 2, "NUL"),
    "a NUL byte in a CSV cell": ("f.csv", b"prompt_id,prompt\nq1,fine\nq2,a\x00b\n", 3, "NUL"),
    "a NUL byte in a metadata key": (
        "f.jsonl",
        GOOD + b'{"prompt_id": "q2", "prompt": "p", "metadata": {"k\\u0000": 1}}\n',
        2,
        "NUL",
    ),
    "a NUL byte in a metadata value": (
        "f.jsonl",
        GOOD + b'{"prompt_id": "q2", "prompt": "p", "metadata": {"k": ["x\\u0000"]}}\n',
        2,
        "NUL",
    ),
    "a NUL byte in a Parquet cell": ("f.parquet", parquet(source=["fine", "a\x00b"]), 2, "NUL"),
    "NaN in JSONL metadata": (
        "f.jsonl",
        GOOD + b'{"prompt_id": "q2", "prompt": "p", "metadata": {"x": NaN}}\n',
        2,
        "NaN",
    ),
    "Infinity in JSONL metadata": (
        "f.jsonl",
        GOOD + b'{"prompt_id": "q2", "prompt": "p", "metadata": {"x": -Infinity}}\n',
        2,
        "Infinity",
    ),
    "Infinity in a Parquet metadata column": (
        "f.parquet",
        parquet(**{"metadata.score": [1.0, float("inf")]}),
        2,
        "finite",
    ),
    "a lone surrogate in text": ("f.jsonl", GOOD + b'{"prompt_id": "q2", "prompt": "a\\ud800b"}\n', 2, "surrogate"),
    "a lone surrogate in a metadata key": (
        "f.jsonl",
        GOOD + b'{"prompt_id": "q2", "prompt": "p", "metadata": {"\\udfff": "v"}}\n',
        2,
        "surrogate",
    ),
}


@pytest.fixture
def alpha(db):
    from evalhub.catalog.models import LanguageModel

    return LanguageModel.objects.create(slug="alpha", display_name="Alpha")


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_file_is_refused_naming_the_line_and_writes_nothing(alpha, case):
    name, data, line, reason = MALFORMED[case]
    before = table_sizes()
    with pytest.raises(ImportRejected) as rejected:
        do_import_benchmark(filename=name, data=data, benchmark_slug="odd", allow_new_models=True)
    errors = rejected.value.errors
    assert [error.line for error in errors] == [line], [str(error) for error in errors]
    assert reason in str(errors[0])
    assert table_sizes() == before


def test_the_upload_page_lists_the_reason_instead_of_a_server_error(alpha, admin_user, login):
    name, data, _, _ = MALFORMED["deeply nested JSON"]
    response = login(admin_user).post(
        "/benchmarks/import/", {"file": SimpleUploadedFile(name, data), "benchmark": "odd", "task_type": "other"}
    )
    assert response.status_code == 400
    assert "line 2: " in response.content.decode()
    assert "nested" in response.content.decode()


def test_the_import_command_prints_the_reason_instead_of_a_traceback(alpha, tmp_path, capsys):
    name, data, _, _ = MALFORMED["a lone surrogate in text"]
    path = tmp_path / name
    path.write_bytes(data)
    with pytest.raises(CommandError, match="1 problem"):
        call_command("import_benchmark", str(path), "--benchmark", "odd")
    assert f"{name}: line 2: " in capsys.readouterr().err


def test_a_csv_with_an_unterminated_quote_is_refused_at_the_line_where_the_quote_opens(alpha):
    data = b'prompt_id,prompt\nq1,fine\nq2,"never closed\nq3,swallowed\nq4,also swallowed\n'
    before = table_sizes()
    with pytest.raises(ImportRejected) as rejected:
        do_import_benchmark(filename="f.csv", data=data, benchmark_slug="odd")
    assert [str(error) for error in rejected.value.errors] == [
        "line 3: the CSV cannot be read here: a quoted cell starts on this line and is never closed."
    ]
    assert table_sizes() == before


def test_a_csv_with_text_after_a_closing_quote_is_refused_instead_of_losing_the_text(alpha):
    with pytest.raises(ImportRejected) as rejected:
        do_import_benchmark(filename="f.csv", data=b'prompt_id,prompt\nq1,"quoted" tail\n', benchmark_slug="odd")
    assert [error.line for error in rejected.value.errors] == [2]
    assert "after the closing quote" in str(rejected.value.errors[0])


class _RollBack(Exception):
    pass


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(rows, min_size=1, max_size=3, unique_by=lambda row: str(row["prompt_id"]).strip()))
def test_whatever_the_reader_accepts_the_database_stores(alpha, file_rows):
    data = "\n".join(json.dumps(row, ensure_ascii=True, allow_nan=True) for row in file_rows).encode()
    try:
        with transaction.atomic():
            do_import_benchmark(filename="f.jsonl", data=data, benchmark_slug="odd", allow_new_models=True)
            raise _RollBack  # each example starts from the same empty benchmark
    except (ImportRejected, _RollBack):
        pass


def test_a_model_slug_ending_in_a_newline_is_refused_by_line(alpha):
    data = b'{"prompt_id": "q1", "prompt": "p", "model": "alpha\\n", "response": "r"}\n'
    with pytest.raises(ImportRejected) as rejected:
        do_import_benchmark(filename="f.jsonl", data=data, benchmark_slug="odd", allow_new_models=True)
    assert [str(error) for error in rejected.value.errors] == [
        "line 1: model 'alpha\\n' is not a slug (letters, digits, '-' and '_' only)."
    ]


def test_a_benchmark_slug_ending_in_a_newline_is_refused_before_reading_the_file(alpha, tmp_path):
    before = table_sizes()
    with pytest.raises(ImportRejected) as rejected:
        do_import_benchmark(filename="f.jsonl", data=GOOD, benchmark_slug="odd\n")
    assert "is not a slug" in str(rejected.value.errors[0])
    path = tmp_path / "f.jsonl"
    path.write_bytes(GOOD)
    with pytest.raises(CommandError):
        call_command("import_benchmark", str(path), "--benchmark", "odd\n")
    assert table_sizes() == before
