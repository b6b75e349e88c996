"""The benchmark file schema: read JSONL, CSV or Parquet and check every row before any write.

One row per response ("long" format); prompt fields repeat on each row of a prompt, or
are given once on its first row. Columns:

| column | required | meaning |
| --- | --- | --- |
| prompt_id | yes | the prompt's id within the benchmark (text or integer) |
| prompt | on a prompt's first row | the task input |
| category | no | scenario / category (e.g. `math`) |
| synopsis | no | e.g. the paper's abstract (GEM-S) |
| source | no | e.g. the full paper text |
| reference_answer | no | privileged: a reference answer |
| rating_guidelines | no | privileged: rating guidelines |
| privileged.NAME | no | privileged: any other named field (text) |
| metadata.NAME | no | free metadata of the prompt |
| model | no | slug of the model or human author who wrote `response` |
| response | with `model` | the response text |
| response_variant | no | tells apart several responses of one model to one prompt |
| response_metadata.NAME | no | free metadata of the response (e.g. `preprocessed`, GEM's C.1 text) |

In JSONL, `privileged`, `metadata` and `response_metadata` may also be objects. A row without `model`
defines (or repeats) only the prompt.

Imports add; they never blank. A prompt field is changed only by a file that carries its column: a column
the file lacks leaves the stored value as it is, and an empty value in a column the file has clears it (the
explicit way to remove a reference answer, a privileged or metadata key). `prompt` may be left out for a
prompt the benchmark already holds; the importer refuses a new prompt without it (`PromptRecord.given`
says which fields a row carried).
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import msgspec

from evalhub.core.files.disk_map import DiskMap
from evalhub.core.files.limits import length_problems
from evalhub.core.files.rows import (
    FileError,
    RowError,
    Source,
    read_rows,
    unit_of,
    unstorable_text,
    unstorable_value,
)
from evalhub.core.files.seen_keys import SeenKeys
from evalhub.core.files.slugs import is_slug
from evalhub.core.files.spool import Spool

PROMPT_TEXT_FIELDS = ("prompt", "category", "synopsis", "source", "reference_answer", "rating_guidelines")
RESPONSE_FIELDS = ("model", "response", "response_variant")
COLUMNS = ("prompt_id", *PROMPT_TEXT_FIELDS, *RESPONSE_FIELDS)
NESTED = ("privileged", "metadata", "response_metadata")
# The prompt's text fields (PromptRecord's and the Prompt model's names) by the column that carries each.
TEXT_FIELD_OF_COLUMN = {"prompt": "text", **{name: name for name in PROMPT_TEXT_FIELDS[1:]}}
PROMPT_TEXT_ATTRIBUTES = tuple(TEXT_FIELD_OF_COLUMN.values())
ALL_TEXT_FIELDS = frozenset(PROMPT_TEXT_ATTRIBUTES)


class PromptRecord(msgspec.Struct, omit_defaults=True):
    """A prompt as read: kept on disk by its id (ParsedFile.prompts) while the file is read and stored."""

    external_id: str
    line: int
    text: str = ""
    category: str = ""
    synopsis: str = ""
    source: str = ""
    reference_answer: str = ""
    rating_guidelines: str = ""
    privileged: dict[str, str] = msgspec.field(default_factory=dict)
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)
    # Which text fields (`text`, `category`, …) the file carried for this prompt: only these change a
    # stored prompt. Every one by default, as for a prompt written in full.
    given: frozenset[str] = ALL_TEXT_FIELDS
    # `privileged.NAME` / `metadata.NAME` columns the file carried empty: these keys are removed.
    cleared: tuple[str, ...] = ()


class ResponseRecord(msgspec.Struct, frozen=True, array_like=True):
    """A response as read: spooled to disk with its text (a file of millions does not stay in memory)."""

    prompt_id: str
    model: str
    variant: str
    text: str
    line: int
    metadata: dict[str, Any] = msgspec.field(default_factory=dict)


class _ResponseFields(NamedTuple):
    """A row's response as read, checked once its prompt is."""

    model: str
    variant: str
    text: str
    metadata: dict[str, Any]
    by_reference: bool = False  # named, not given: the model is checked, no response is kept


@dataclass
class ParsedFile:
    """What reading a file found, on disk: its prompts by their id in the file (iterated in the order the
    file first names them), its responses in order."""

    prompts: DiskMap[PromptRecord] = field(default_factory=lambda: DiskMap(PromptRecord))
    responses: Spool[ResponseRecord] = field(default_factory=lambda: Spool(ResponseRecord))
    errors: list[RowError] = field(default_factory=list)
    new_models: set[str] = field(default_factory=set)
    rows: int = 0
    unit: str = "line"  # what a row is called in messages (a Parquet file's are rows)

    @property
    def ok(self) -> bool:
        return not self.errors

    def close(self) -> None:
        """Its records on disk go now, not when the object is collected."""
        self.prompts.close()
        self.responses.close()

    def __enter__(self) -> ParsedFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def parse_benchmark_file(
    data: Source,
    fmt: str,
    *,
    known_models: Collection[str],
    allow_new_models: bool = False,
) -> ParsedFile:
    """Read and check a whole file. Nothing here writes; `errors` lists every bad row."""
    unit = unit_of(fmt)
    try:  # read as checked: one row at a time in memory, not the whole file's dicts
        rows = read_rows(data, fmt, check_header=_check_header, nested=NESTED)
        parsed = parse_rows(rows, unit, known_models=known_models, allow_new_models=allow_new_models)
    except FileError as error:  # the file cannot be read on: that alone is said
        return ParsedFile(errors=[RowError(error.line, str(error), unit)])
    if parsed.rows == 0:
        parsed.errors.append(RowError(None, "the file has no rows."))
    return parsed


def parse_rows(
    rows: Iterable[tuple[int, dict[str, Any] | str]],
    unit: str,
    *,
    known_models: Collection[str],
    allow_new_models: bool = False,
) -> ParsedFile:
    """Check rows already read (as `read_rows` gives them) against this schema."""
    checker = ResponseChecker(unit, known_models=known_models, allow_new_models=allow_new_models)
    for location, row in rows:
        checker.check(location, row)
    return checker.finish()


def _check_header(columns: list[str]) -> None:
    duplicates = sorted({name for name in columns if columns.count(name) > 1})
    if duplicates:
        raise FileError(f"duplicate column(s): {', '.join(duplicates)}.", 1)
    for name in columns:
        problem = _unknown_column(name)
        if problem:
            raise FileError(problem, 1)
    for required in ("prompt_id",):
        if required not in columns:
            raise FileError(f"missing required column {required!r}.", 1)


def _unknown_column(name: str) -> str | None:
    if name in COLUMNS or any(name.startswith(f"{prefix}.") and len(name) > len(prefix) + 1 for prefix in NESTED):
        return None
    hint = difflib.get_close_matches(name, COLUMNS, n=1)
    suggestion = f" Did you mean {hint[0]!r}?" if hint else ""
    nested = "privileged.NAME, metadata.NAME and response_metadata.NAME"
    return f"unknown column {name!r}.{suggestion} Allowed: {', '.join(COLUMNS)}, {nested}."


class ResponseChecker:
    """Checks rows as they are read and remembers what earlier rows defined: each prompt (on disk, in
    `ParsedFile.prompts`), and each response's key as two hashes (the response itself goes to disk too).
    A row is checked on its own at once; SETTLE_BATCH rows at a time are then compared with the prompts
    earlier rows defined, looked up together. `finish` names the repeated responses and gives what was
    found, its errors in the file's order."""

    SETTLE_BATCH = 10_000

    def __init__(
        self,
        unit: str,
        *,
        known_models: Collection[str],
        allow_new_models: bool,
        responses_seen_once: bool = False,
        empty_answers: bool = False,
    ) -> None:
        self.parsed = ParsedFile(unit=unit)
        self.known_models = set(known_models)
        self.allow_new_models = allow_new_models
        self.unit = unit
        self.pending: list[tuple[int, PromptRecord, _ResponseFields]] = []
        # A caller that passes each response once (ResponsesSeen) has no repeat to find: keeping the keys
        # cost a labels file in the shape of Arena's votes 40 bytes a vote (two new responses a row).
        self.responses = None if responses_seen_once else SeenKeys()
        # A labels or score file's answer is given as it was judged, an empty one too; a benchmark file's
        # empty `response` cell is more likely a slip (a row without `model` is how it gives a bare prompt).
        self.empty_answers = empty_answers

    def error(self, line: int, message: str) -> None:
        self.parsed.errors.append(RowError(line, message, self.unit))

    def finish(self) -> ParsedFile:
        self._settle()
        self.parsed.errors.sort(key=lambda error: error.line or 0)  # a row's own errors came before
        repeats = dict(self.responses.repeats()) if self.responses is not None else {}
        if repeats:  # the file is refused: its repeated responses are read back from disk to be named
            for record in self.parsed.responses:
                if record.line in repeats:
                    variant_note = f", response_variant {record.variant!r}" if record.variant else ""
                    self.error(
                        record.line,
                        f"duplicate response for prompt_id {record.prompt_id!r}, model {record.model!r}"
                        f"{variant_note} (first on {self.unit} {repeats[record.line]}).",
                    )
            self.parsed.errors.sort(key=lambda error: error.line or 0)
        return self.parsed

    def check(self, line: int, row: dict[str, Any] | str, *, by_reference: bool = False) -> None:
        """`by_reference`: the row names a response (prompt, model) the benchmark holds, without its text."""
        self.parsed.rows += 1
        if isinstance(row, str):
            self.error(line, row)
            return
        layout = _layout_of(tuple(row))
        problems = list(layout.problems)
        prompt_id = self._prompt_id(row.get("prompt_id"), problems)
        texts = {name: self._text(row, name, problems) for name in layout.texts}
        problems += length_problems(texts)
        privileged = {short: self._text(row, key, problems) for key, short in layout.privileged}
        metadata = {short: row[key] for key, short in layout.metadata}
        response_metadata = {short: row[key] for key, short in layout.response_metadata if row[key] is not None}
        for key in layout.nested_values:
            problem = unstorable_value(key, row[key], depth=1)
            if problem:
                problems.append(problem)
        if problems:
            for problem in problems:
                self.error(line, problem)
            return
        cleared = tuple(f"privileged.{key}" for key, value in privileged.items() if not value)
        cleared += tuple(f"metadata.{key}" for key, value in metadata.items() if value is None)
        record = PromptRecord(
            external_id=prompt_id,
            line=line,
            text=texts.get("prompt", ""),
            category=texts.get("category", ""),
            synopsis=texts.get("synopsis", ""),
            source=texts.get("source", ""),
            reference_answer=texts.get("reference_answer", ""),
            rating_guidelines=texts.get("rating_guidelines", ""),
            privileged={key: value for key, value in privileged.items() if value},
            metadata={key: value for key, value in metadata.items() if value is not None},
            given=layout.given,
            cleared=cleared,
        )
        response = _ResponseFields(
            texts.get("model", ""),
            texts.get("response_variant", ""),
            texts.get("response", ""),
            response_metadata,
            by_reference,
        )
        self.pending.append((line, record, response))
        if len(self.pending) >= self.SETTLE_BATCH:
            self._settle()

    def _settle(self) -> None:
        """The pending rows' prompts merged, in the file's order, with those earlier rows defined (read
        from disk together); then each row's response is checked and kept."""
        pending, self.pending = self.pending, []
        known = self.parsed.prompts.get_many({record.external_id for _, record, _ in pending})
        touched: dict[str, PromptRecord] = {}  # written back together: new ones in the order first named
        for line, record, response in pending:
            if not self._merge_prompt(line, record, known, touched, has_response=bool(response.model or response.text)):
                continue
            if response.metadata and not response.model:
                self.error(line, "'response_metadata' is given without 'model': it describes a response.")
                continue
            self._add_response(line, record.external_id, *response)
        self.parsed.prompts.put_many(touched.items())

    def _prompt_id(self, value: Any, problems: list[str]) -> str:
        if value is None or (isinstance(value, str) and not value.strip()):
            problems.append("missing required field 'prompt_id'.")
            return ""
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            problems.append(f"'prompt_id' must be text or an integer, not {_type_name(value)}.")
            return ""
        text = str(value).strip()
        problems += length_problems({"prompt_id": text})
        unstorable = unstorable_text(text)
        if unstorable:
            problems.append(f"'prompt_id' {unstorable}")
            return ""
        return text

    def _text(self, row: Mapping[str, Any], name: str, problems: list[str]) -> str:
        value = row.get(name)
        if value is None:
            return ""
        if not isinstance(value, str):
            problems.append(f"{name!r} must be text, not {_type_name(value)}.")
            return ""
        problem = unstorable_text(value)
        if problem:
            problems.append(f"{name!r} {problem}")
            return ""
        return value

    def _merge_prompt(
        self,
        line: int,
        record: PromptRecord,
        known: dict[str, PromptRecord],
        touched: dict[str, PromptRecord],
        *,
        has_response: bool,
    ) -> bool:
        first = known.get(record.external_id)
        if first is None:
            if not record.text.strip():
                # Only a prompt the benchmark holds may go without its text: the importer checks.
                record.given -= {"text"}
            known[record.external_id] = touched[record.external_id] = record
            return True
        if not has_response:
            self.error(line, f"duplicate prompt_id {record.external_id!r} (first on {self.unit} {first.line}).")
            return False
        # A field the prompt's first row left out may come on a later row (a judgments file names a prompt
        # on many rows); a field both give must agree.
        adopted = {name for name in record.given - first.given if getattr(record, name)}
        conflicts = [
            name
            for name in PROMPT_TEXT_ATTRIBUTES
            if name not in adopted and getattr(record, name) and getattr(record, name) != getattr(first, name)
        ]
        conflicts += [
            f"privileged.{key}" for key, value in record.privileged.items() if first.privileged.get(key, value) != value
        ]
        conflicts += [
            f"metadata.{key}" for key, value in record.metadata.items() if first.metadata.get(key, value) != value
        ]
        if conflicts:
            shown = ", ".join("prompt" if name == "text" else name for name in conflicts)
            self.error(
                line,
                f"prompt_id {record.external_id!r} has a different {shown} than on {self.unit} {first.line}.",
            )
            return False
        added_keys = (
            record.privileged.keys() - first.privileged.keys() or record.metadata.keys() - first.metadata.keys()
        )
        if adopted or added_keys:
            for name in adopted:
                setattr(first, name, getattr(record, name))
            first.given |= adopted
            for key, value in record.privileged.items():
                first.privileged.setdefault(key, value)
            for key, value in record.metadata.items():
                first.metadata.setdefault(key, value)
            touched[record.external_id] = first
        return True

    def _add_response(
        self,
        line: int,
        prompt_id: str,
        model: str,
        variant: str,
        text: str,
        metadata: dict[str, Any],
        by_reference: bool = False,
    ) -> None:
        if not model and not text:
            return
        if not model:
            self.error(line, "'response' is given without 'model'.")
            return
        if not text.strip() and not self.empty_answers and not by_reference:
            self.error(line, f"missing 'response' text for model {model!r}.")
            return
        if not is_slug(model):
            self.error(line, f"model {model!r} is not a slug (letters, digits, '-' and '_' only).")
            return
        if model not in self.known_models:
            if not self.allow_new_models:
                hint = difflib.get_close_matches(model, sorted(self.known_models), n=1)
                suggestion = f" Did you mean {hint[0]!r}?" if hint else ""
                self.error(
                    line,
                    f"unknown model {model!r}.{suggestion} Add it first, or allow new models to be created.",
                )
                return
            self.parsed.new_models.add(model)
        if by_reference:
            return
        if self.responses is not None:
            self.responses.add((prompt_id, model, variant), line)  # a repeat is named once the file is read
        self.parsed.responses.add(ResponseRecord(prompt_id, model, variant, text, line, metadata))


@functools.cache
def _given_of(columns: frozenset[str]) -> frozenset[str]:
    return frozenset(TEXT_FIELD_OF_COLUMN[name] for name in columns)


_TEXT_COLUMNS = frozenset(TEXT_FIELD_OF_COLUMN)


class _Layout(NamedTuple):
    """What a row's column names alone say, the same for every row that has them (most files have one
    layout, or a few): checking each name and sorting out the nested ones cost each row of an Arena-shaped
    labels file two responses' worth of string work (a fifth of its import)."""

    problems: tuple[str, ...]  # each name's, in the row's order
    texts: tuple[str, ...]  # the text fields the row has, in the order they are checked
    privileged: tuple[tuple[str, str], ...]  # (column, key)
    metadata: tuple[tuple[str, str], ...]
    response_metadata: tuple[tuple[str, str], ...]
    nested_values: tuple[str, ...]  # the metadata columns whose values are checked, in the row's order
    given: frozenset[str]  # the prompt's text fields the row carries


@functools.lru_cache(maxsize=1024)
def _layout_of(names: tuple[str, ...]) -> _Layout:
    problems = []
    for name in names:
        problem = _unknown_column(name)
        if problem is None and (unstorable := unstorable_text(name)):
            problem = f"the field name {name!r} {unstorable}"
        if problem:
            problems.append(problem)

    def nested(prefix: str) -> tuple[tuple[str, str], ...]:
        return tuple((name, name.split(".", 1)[1]) for name in names if name.startswith(prefix))

    return _Layout(
        problems=tuple(problems),
        texts=tuple(name for name in (*PROMPT_TEXT_FIELDS, *RESPONSE_FIELDS) if name in names),
        privileged=nested("privileged."),
        metadata=nested("metadata."),
        response_metadata=nested("response_metadata."),
        nested_values=tuple(name for name in names if name.startswith(("metadata.", "response_metadata."))),
        given=_given_of(_TEXT_COLUMNS.intersection(names)),
    )


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
