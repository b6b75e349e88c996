"""A benchmark file read as a stream (the command's file, the page's upload): the same import as its
bytes, a repeated response named as before, and memory that grows with the file's prompts, not with
its responses (their texts wait on disk)."""

from __future__ import annotations

import gzip
import io
import json
import tracemalloc

import pytest

from evalhub.catalog.actions.benchmarks import do_import_benchmark
from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.models import Prompt, Response
from evalhub.core.files.benchmarks import parse_benchmark_file
from evalhub.core.files.tables import to_text
from tests.catalog.test_import import ROWS

pytestmark = pytest.mark.django_db


def stored() -> list[tuple]:
    return sorted(Response.objects.values_list("prompt__external_id", "model__slug", "variant", "text", "metadata"))


def imported(name: str, data: bytes, *, as_stream: bool, slug: str = "primes"):
    source = io.BytesIO(data) if as_stream else data
    return do_import_benchmark(filename=name, data=source, benchmark_slug=slug, allow_new_models=True)


def answers_csv(count: int, models: int = 20) -> bytes:
    """Every prompt answered by `models` models, each answer a few sentences, the prompt on its first row."""
    out = ["prompt_id,prompt,model,response"]
    for row in range(count):
        prompt, model = divmod(row, models)
        text = f"Question {prompt}: what is {prompt} squared?" if model == 0 else ""
        answer = f"The answer of m{model}: {prompt} squared is {prompt * prompt}. " * 4
        out.append(f"p{prompt},{text},m{model},{answer.strip()}")
    return ("\n".join(out) + "\n").encode()


WITH_METADATA = [
    {**ROWS[0], "response_metadata": {"preprocessed": "no", "tokens": 3, "scores": [1.5, None]}},
    *ROWS[1:],
]


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("answers.csv.gz", gzip.compress(answers_csv(200))),
        ("primes.jsonl", to_text(WITH_METADATA, "jsonl").encode()),
    ],
)
def test_a_benchmark_file_read_as_a_stream_imports_as_its_bytes_do(name, data):
    from_bytes = imported(name, data, as_stream=False)
    as_bytes = stored()
    Response.objects.all().delete()
    Prompt.objects.all().delete()
    from_stream = imported(name, data, as_stream=True)
    assert stored() == as_bytes
    assert as_bytes
    assert from_stream.counts["responses_created"] == from_bytes.counts["responses_created"] == len(as_bytes)
    assert imported(name, data, as_stream=True).counts["responses_unchanged"] == len(as_bytes)


def refusal(data: bytes, *, as_stream: bool) -> list[tuple]:
    with pytest.raises(ImportRejected) as rejected:
        imported("answers.csv", data, as_stream=as_stream)
    return [(error.line, error.message) for error in rejected.value.errors]


def test_a_repeated_response_is_named_with_its_first_line_from_a_stream_as_from_bytes():
    lines = answers_csv(40).split(b"\n")
    data = b"\n".join([*lines[:5], lines[3].replace(b"Question 0: what is 0 squared?", b""), *lines[5:]])
    assert refusal(data, as_stream=True) == refusal(data, as_stream=False)
    assert refusal(data, as_stream=True) == [
        (6, "duplicate response for prompt_id 'p0', model 'm2' (first on line 4).")
    ]
    assert not Response.objects.exists()


def peak_while_reading(data: bytes) -> int:
    """The most memory Python held while reading and checking the file as a stream."""
    stream = io.BytesIO(data)
    tracemalloc.start()
    try:
        parsed = parse_benchmark_file(stream, "csv", known_models=(), allow_new_models=True)
        assert parsed.ok, parsed.errors[:3]
        assert len(parsed.responses) == data.count(b"\n") - 1
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_reading_a_benchmark_file_keeps_a_few_bytes_a_response_not_its_text():
    """A response's record, text and key cost about 500 bytes each (5 GB at ten million); now its key
    as two hashes and its line, the record itself on disk (a prompt is still kept whole)."""
    small, large = answers_csv(20_000), answers_csv(80_000)
    per_row = (peak_while_reading(large) - peak_while_reading(small)) / 60_000
    assert per_row < 100, f"{per_row:.0f} bytes a row"


def prompts_jsonl(count: int) -> bytes:
    """A prompt a row (the import benchmark's shape): its text, category, reference answer and one answer."""
    return b"".join(
        json.dumps(
            {
                "prompt_id": f"q{row}",
                "prompt": f"Question {row}: what is {row} squared, and why?",
                "category": f"topic-{row % 7}",
                "reference_answer": f"{row * row}, by multiplying {row} by itself.",
                "model": "m0",
                "response": f"{row} squared is {row * row}.",
            }
        ).encode()
        + b"\n"
        for row in range(count)
    )


def peak_while_importing(data: bytes) -> int:
    """The most memory Python held while a file of new prompts was read, checked and stored."""
    tracemalloc.start()
    try:
        summary = imported("prompts.jsonl", data, as_stream=True, slug=f"b{len(data)}")
        assert summary.counts["prompts_created"] == data.count(b"\n")
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_file_of_distinct_prompts_imports_in_a_few_bytes_a_prompt():
    """A prompt's record, the dict entry naming it and what the import stored for it cost about 900 bytes
    a prompt (0.93 GiB at a million, ten times that at ten million); the prompts are now kept on disk
    while the file is read and stored, so what grows is the responses' keys (SeenKeys, 24 bytes a row)."""
    small, large = prompts_jsonl(10_000), prompts_jsonl(40_000)
    per_row = (peak_while_importing(large) - peak_while_importing(small)) / 30_000
    assert Prompt.objects.count() == 50_000
    assert per_row < 100, f"{per_row:.0f} bytes a row"
