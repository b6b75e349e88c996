"""The import schema, checked without a database."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from evalhub.core.files.benchmarks import parse_benchmark_file
from evalhub.core.files.rows import detect_format

MODELS = {"gpt-4o", "claude-3", "human-expert"}


def jsonl(*rows: dict) -> bytes:
    return "\n".join(json.dumps(row) for row in rows).encode()


def parse(data: bytes, fmt: str = "jsonl", **kwargs):
    return parse_benchmark_file(data, fmt, known_models=kwargs.pop("known_models", MODELS), **kwargs)


def messages(parsed) -> list[str]:
    return [str(error) for error in parsed.errors]


def test_a_jsonl_file_with_nested_privileged_fields_parses_into_prompts_and_responses():
    data = jsonl(
        {
            "prompt_id": "q1",
            "prompt": "Is 221 prime?",
            "reference_answer": "No",
            "privileged": {"hint": "13"},
            "metadata": {"difficulty": 2},
            "model": "gpt-4o",
            "response": "No, 13 x 17.",
        },
        {"prompt_id": "q1", "model": "claude-3", "response": "Yes."},
        {"prompt_id": 7, "prompt": "Say hi."},
    )
    parsed = parse(data)
    assert parsed.ok, messages(parsed)
    assert [p.external_id for p in parsed.prompts] == ["q1", "7"]
    first, _ = parsed.prompts
    assert (first.text, first.reference_answer, first.privileged, first.metadata) == (
        "Is 221 prime?",
        "No",
        {"hint": "13"},
        {"difficulty": 2},
    )
    assert [(r.prompt_id, r.model, r.text) for r in parsed.responses] == [
        ("q1", "gpt-4o", "No, 13 x 17."),
        ("q1", "claude-3", "Yes."),
    ]
    assert parsed.rows == 3


def test_csv_errors_name_the_physical_line_even_after_a_multi_line_cell():
    data = b'prompt_id,prompt,model,response\nq1,"line one\nline two\nline three",gpt-4o,fine\nq2,Another,gpt-5,oops\n'
    parsed = parse(data, "csv")
    assert messages(parsed) == [
        "line 5: unknown model 'gpt-5'. Did you mean 'gpt-4o'? Add it first, or allow new models to be created."
    ]


def test_a_parquet_file_parses_like_the_same_csv():
    frame = pd.DataFrame(
        {
            "prompt_id": ["a", "a"],
            "prompt": ["P", None],
            "model": ["gpt-4o", "claude-3"],
            "response": ["x", "y"],
            "privileged.hint": ["h", None],
        }
    )
    buffer = io.BytesIO()
    frame.to_parquet(buffer)
    parsed = parse(buffer.getvalue(), "parquet")
    assert parsed.ok, messages(parsed)
    assert [prompt.privileged for prompt in parsed.prompts] == [{"hint": "h"}]
    assert [r.model for r in parsed.responses] == ["gpt-4o", "claude-3"]


def test_every_bad_row_is_reported_with_its_line_and_reason():
    data = (
        jsonl(
            {"prompt_id": "q1", "prompt": "ok", "model": "gpt-4o", "response": "r"},
            {"prompt": "no id"},
            {"prompt_id": "q2", "prompt": 42},
            {"prompt_id": "q1", "model": "gpt-4o", "response": "again"},
            {"prompt_id": "q3", "prompt": "p", "model": "nobody", "response": "r"},
            {"prompt_id": "q4", "prompt": "p", "refrence_answer": "typo"},
        )
        + b"\n{not json\n"
    )
    assert messages(parse(data)) == [
        "line 2: missing required field 'prompt_id'.",
        "line 3: 'prompt' must be text, not a number.",
        "line 4: duplicate response for prompt_id 'q1', model 'gpt-4o' (first on line 1).",
        "line 5: unknown model 'nobody'. Add it first, or allow new models to be created.",
        "line 6: unknown column 'refrence_answer'. Did you mean 'reference_answer'? Allowed: prompt_id, prompt, "
        "category, synopsis, source, reference_answer, rating_guidelines, model, response, response_variant, "
        "privileged.NAME, metadata.NAME and response_metadata.NAME.",
        "line 7: not valid JSON (Expecting property name enclosed in double quotes at column 2).",
    ]


def test_non_utf8_bytes_are_reported_with_their_line():
    data = b'{"prompt_id": "a", "prompt": "fine"}\n{"prompt_id": "b", "prompt": "caf\xe9"}\n'
    (error,) = parse(data).errors
    assert error.line == 2
    assert "not valid UTF-8" in error.message
    assert "0xe9" in error.message


def test_a_prompt_repeated_with_different_text_is_a_conflict():
    data = jsonl(
        {"prompt_id": "q1", "prompt": "A", "model": "gpt-4o", "response": "r"},
        {"prompt_id": "q1", "prompt": "B", "model": "claude-3", "response": "s"},
    )
    assert messages(parse(data)) == ["line 2: prompt_id 'q1' has a different prompt than on line 1."]


def test_a_prompt_repeated_with_a_different_reference_answer_is_a_conflict_like_different_text():
    data = jsonl(
        {"prompt_id": "q1", "prompt": "A", "model": "gpt-4o", "response": "r", "reference_answer": "12"},
        {"prompt_id": "q1", "prompt": "A", "model": "claude-3", "response": "s", "reference_answer": "13"},
    )
    assert messages(parse(data)) == ["line 2: prompt_id 'q1' has a different reference_answer than on line 1."]


def test_a_repeated_prompt_only_row_is_a_duplicate_id():
    data = jsonl({"prompt_id": "q1", "prompt": "A"}, {"prompt_id": "q1", "prompt": "A"})
    assert messages(parse(data)) == ["line 2: duplicate prompt_id 'q1' (first on line 1)."]


def test_unknown_models_are_collected_when_new_models_are_allowed():
    data = jsonl({"prompt_id": "q1", "prompt": "A", "model": "new-model", "response": "r"})
    parsed = parse(data, allow_new_models=True)
    assert parsed.ok
    assert parsed.new_models == {"new-model"}


def test_the_same_model_may_answer_twice_under_different_variants():
    data = jsonl(
        {"prompt_id": "q1", "prompt": "A", "model": "gpt-4o", "response": "r", "response_variant": "tier-0"},
        {"prompt_id": "q1", "model": "gpt-4o", "response": "s", "response_variant": "tier-1"},
    )
    assert [r.variant for r in parse(data).responses] == ["tier-0", "tier-1"]


def test_a_csv_without_prompt_id_column_is_rejected_at_the_header():
    assert messages(parse(b"prompt,model\nA,gpt-4o\n", "csv")) == ["line 1: missing required column 'prompt_id'."]


def test_an_empty_file_is_an_error():
    assert messages(parse(b"")) == ["the file has no rows."]


def test_a_corrupt_parquet_file_is_a_clear_error():
    (error,) = parse(b"PAR1 not really", "parquet").errors
    assert error.message.startswith("not a readable Parquet file")


@pytest.mark.parametrize(("name", "fmt"), [("a.jsonl", "jsonl"), ("B.CSV", "csv"), ("x.parquet", "parquet")])
def test_the_format_comes_from_the_file_extension(name, fmt):
    assert detect_format(name) == fmt


def test_an_unsupported_extension_is_refused():
    with pytest.raises(ValueError, match="unsupported file type '.xlsx'"):
        detect_format("data.xlsx")


def test_metadata_integers_past_64_bits_are_kept_exactly_while_the_file_is_on_disk():
    """A metadata integer may have up to MAX_INT_DIGITS digits (an id written as a number); the records
    kept on disk while the file is read once could not hold one past 64 bits (MessagePack's)."""
    from evalhub.core.files.rows import MAX_INT_DIGITS

    big = 10 ** (MAX_INT_DIGITS - 1)
    parsed = parse(
        jsonl(
            {
                "prompt_id": "q1",
                "prompt": "p",
                "metadata": {"id": big},
                "model": "gpt-4o",
                "response": "r",
                "response_metadata": {"id": -big, "score": 0.1},
            }
        )
    )
    assert parsed.ok, messages(parsed)
    (prompt,), (response,) = list(parsed.prompts), list(parsed.responses)
    assert (prompt.metadata, response.metadata) == ({"id": big}, {"id": -big, "score": 0.1})


@pytest.mark.parametrize("settled_every", [1, 2, 3, 10_000])
def test_rows_settled_a_batch_at_a_time_read_as_the_whole_file_does(monkeypatch, settled_every):
    """Rows are compared with the prompts earlier rows defined a batch at a time (looked up on disk
    together): a field a later row adds, a clash and a repeated prompt are found across a batch's edge."""
    from evalhub.core.files.benchmarks import ResponseChecker

    monkeypatch.setattr(ResponseChecker, "SETTLE_BATCH", settled_every)
    data = jsonl(
        {"prompt_id": "q1", "model": "gpt-4o", "response": "a", "metadata": {"k": 1}},
        {"prompt_id": "q2", "prompt": "Two?"},
        {"prompt_id": "q1", "prompt": "One?", "model": "claude-3", "response": "b", "privileged.hint": "h"},
        {"prompt_id": "q2", "prompt": "Not two?", "model": "gpt-4o", "response": "c"},
        {"prompt_id": "q1", "model": "human-expert", "response": "d", "metadata": {"k": 1, "j": 2}},
        {"prompt_id": "q2"},
        {"prompt_id": 3, "prompt": 3},
    )
    parsed = parse(data)
    assert messages(parsed) == [
        "line 4: prompt_id 'q2' has a different prompt than on line 2.",
        "line 6: duplicate prompt_id 'q2' (first on line 2).",
        "line 7: 'prompt' must be text, not a number.",
    ]
    assert [(p.external_id, p.text, p.line, p.privileged, p.metadata) for p in parsed.prompts] == [
        ("q1", "One?", 1, {"hint": "h"}, {"k": 1, "j": 2}),
        ("q2", "Two?", 2, {}, {}),
    ]
    assert [(r.prompt_id, r.model, r.line) for r in parsed.responses] == [
        ("q1", "gpt-4o", 1),
        ("q1", "claude-3", 3),
        ("q1", "human-expert", 5),
    ]


def test_a_rows_column_names_are_checked_once_for_every_row_that_has_them(monkeypatch):
    """Each name of each row was checked again (known, storable, nested or not): a fifth of an Arena-shaped
    labels import, two responses a vote. A row of another layout is still checked, and named, on its own."""
    from evalhub.core.files import benchmarks

    checked: list[str] = []
    unknown = benchmarks._unknown_column

    def counting(name: str) -> str | None:
        checked.append(name)
        return unknown(name)

    monkeypatch.setattr(benchmarks, "_unknown_column", counting)
    lines = ["prompt_id,prompt,model,response,metadata.turn_of_this_test"]  # a layout no other test has
    lines += [f"p{n},Why {n}?,m1,Because {n}.,{n}" for n in range(500)]
    parsed = parse_benchmark_file(("\n".join(lines) + "\n").encode(), "csv", known_models=(), allow_new_models=True)
    assert parsed.ok, parsed.errors[:3]
    assert len(parsed.responses) == 500
    names = ["prompt_id", "prompt", "model", "response", "metadata.turn_of_this_test"]
    assert sorted(checked) == sorted(names * 2), "each name at the header and for its rows' layout, not a row"
    rows = [{"prompt_id": "p1", "prompt": "Why?", "metadata": {"turn": 1}}, {"prompt_id": "p2", "promt": "How?"}]
    parsed = parse_benchmark_file("".join(json.dumps(row) + "\n" for row in rows).encode(), "jsonl", known_models=())
    assert [str(error) for error in parsed.errors] == [
        "line 2: unknown column 'promt'. Did you mean 'prompt'? Allowed: prompt_id, prompt, category, synopsis, "
        "source, reference_answer, rating_guidelines, model, response, response_variant, privileged.NAME, "
        "metadata.NAME and response_metadata.NAME."
    ]
