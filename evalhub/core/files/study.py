"""A judge study in its authors' own files, read through a declared mapping instead of a converter.

Published judge studies rarely ship one row per judgment: annotators sit side by side as columns of the
items file (`annotator_1`, `annotator_2`, …), and each judge's verdicts and reasons come in a file of
their own, joined on an item id. A study is a zip holding those files as they were published and a
`study.json` saying how to read them:

    {
      "items": "items.csv",                 # one row per item: a pair of responses shown to the judges
      "item_id": "id",                      # the item's id column (the joined files carry it too)
      "columns": {"prompt_id": "question_id", "prompt": "question",
                  "model_a": "model_a", "model_b": "model_b",
                  "response_a": "answer_a", "response_b": "answer_b"},
      "verdicts": {"1": "a", "2": "b", "0": "tie"},   # the study's values → a / b / tie
      "judges": [
        {"judge": "annotator-1", "kind": "human", "winner": "annotator_1"},
        {"judge": "GPT-4", "kind": "model", "file": "gpt4.jsonl", "winner": "verdict", "rationale": "reason"}
      ]
    }

`columns` maps evalhub's generic judgment columns (STUDY_COLUMNS) to the items file's; one the mapping
leaves out is read from a column of the same name, if any (`prompt_id` from the item id where neither
exists). Each judge reads its verdict from `winner`, a column of the items file or, with `file`, of a
file joined on `item_id` (the judge's own `item_id` where that file names it otherwise), and its reason
from `rationale`. An empty verdict means that judge did not label the item. Verdicts are read through
`verdicts` (the judge's own, else the study's; a value neither names must be a generic verdict itself).
Each item becomes one generic row per judge that labelled it, checked as any generic judgment file's
(evalhub.core.files.judgments), so every rule of that layout holds: names made slugs, responses by
reference, empty answers, `response_variant` (map it to the item id where one model answered a prompt
differently in two items).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import PurePosixPath
from typing import IO, Any

import msgspec

from evalhub.core.files.disk_map import DiskMap
from evalhub.core.files.judgments import (
    GENERIC_COLUMNS,
    HUMAN,
    MODEL,
    RESPONSE_COLUMNS,
    WINNERS,
    no_duplicate_columns,
)
from evalhub.core.files.rows import FileError, RowError, Source, detect_format, empty_text, read_rows, unit_of
from evalhub.core.files.spool import Spool

STUDY_FILE = "study.json"
UNIT = "row"  # a study's rows are numbered as they are made: errors name their file and line instead
# The generic columns an item gives every judgment made from it; the rest (the verdict, its reason and
# who gave it) are each judge's.
JUDGE_COLUMNS = ("judge", "judge_kind", "winner", "probability_a", "grade", "blind_winner", "aid", "rationale")
STUDY_COLUMNS = tuple(column for column in GENERIC_COLUMNS if column not in JUDGE_COLUMNS)
JOINED_AT_A_TIME = 1000  # joined rows written to disk, and looked up, together


class JudgeColumns(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    judge: str  # its name, as the study gives it (made a slug, the name kept for display)
    winner: str  # the column holding its verdict
    kind: str = ""  # human | model; default: by the name, as in generic files
    rationale: str = ""  # the column holding its reason
    file: str = ""  # a file of the zip joined on the item id; "" = the items file
    item_id: str = ""  # that file's item-id column, where not the study's
    verdicts: dict[str, str] = msgspec.field(default_factory=dict)


class StudyMapping(msgspec.Struct, forbid_unknown_fields=True, frozen=True):
    items: str
    item_id: str
    judges: list[JudgeColumns]
    columns: dict[str, str] = msgspec.field(default_factory=dict)
    verdicts: dict[str, str] = msgspec.field(default_factory=dict)


class Joined(msgspec.Struct, array_like=True, frozen=True):
    """One item's row in a joined file (the columns its judges read), on disk by the item's id until the
    items file is read; an item of the items file is kept the same way, with no values, to find repeats."""

    line: int
    values: dict[str, Any] | None = None


def read_mapping(text: bytes) -> StudyMapping:
    """The study's mapping, or FileError saying what is wrong with it."""
    try:
        mapping = msgspec.json.decode(text, type=StudyMapping)
    except msgspec.DecodeError as error:
        raise FileError(f"{STUDY_FILE} cannot be read: {error}.") from None
    unknown = sorted(set(mapping.columns) - set(STUDY_COLUMNS))
    if unknown:
        raise FileError(f"{STUDY_FILE}: unknown column(s) {', '.join(unknown)}; map {', '.join(STUDY_COLUMNS)}.")
    if not mapping.judges:
        raise FileError(f"{STUDY_FILE} names no judge.")
    names = [judge.judge for judge in mapping.judges]
    if repeated := sorted({name for name in names if names.count(name) > 1}):
        raise FileError(f"{STUDY_FILE} names judge(s) {', '.join(map(repr, repeated))} twice.")
    id_columns: dict[str, str] = {}
    for judge in mapping.judges:
        if judge.file and id_columns.setdefault(judge.file, judge.item_id) != judge.item_id:
            raise FileError(f"{STUDY_FILE}: the judges reading {judge.file!r} name its item id column differently.")
        if judge.kind not in ("", HUMAN, MODEL):
            raise FileError(f"{STUDY_FILE}: judge {judge.judge!r} has kind {judge.kind!r}; use human or model.")
        for given, verdict in {**mapping.verdicts, **judge.verdicts}.items():
            if verdict not in WINNERS:
                raise FileError(
                    f"{STUDY_FILE}: verdict {given!r} reads as {verdict!r}, which is none of {', '.join(WINNERS)}."
                )
    return mapping


class StudyRows:
    """A study zip's judgments as generic rows: (number, row, or why it cannot be one), once iterated.
    `errors` holds what is wrong in the joined files (read first, whole); `places_of` names the file
    and line (and the judge) a number came from, for messages. Use it as a context manager."""

    def __init__(self, source: Source, *, limit: int) -> None:
        self.limit = limit
        self.read_bytes = 0
        try:
            self.archive = zipfile.ZipFile(io.BytesIO(source) if isinstance(source, bytes) else source)
        except zipfile.BadZipFile:
            raise FileError("a study is a zip of its files and study.json; this is not a zip file.") from None
        try:
            self.mapping, self.formats = self._declared()
        except FileError:
            self.archive.close()
            raise
        self.units = {name: unit_of(fmt) for name, fmt in self.formats.items()}  # "line" or "row", as errors say
        self.errors: list[RowError] = []
        self.places: Spool[tuple[int, str]] = Spool(tuple[int, str])
        self.joined: dict[str, DiskMap[Joined]] = {}
        self.items_seen: DiskMap[Joined] = DiskMap(Joined)

    def _declared(self) -> tuple[StudyMapping, dict[str, str]]:
        """The study's mapping, and the format of each file it names, or FileError saying what is missing."""
        names = {PurePosixPath(info.filename).as_posix() for info in self.archive.infolist() if not info.is_dir()}
        if STUDY_FILE not in names:
            raise FileError(f"the zip holds no {STUDY_FILE} at its top (the mapping that says how to read the study).")
        mapping = read_mapping(self._member(STUDY_FILE).read())
        files = sorted({mapping.items, *(judge.file for judge in mapping.judges if judge.file)})
        for name in files:
            if name not in names:
                raise FileError(f"{STUDY_FILE} names {name!r}, which the zip does not hold.")
        return mapping, {name: _format(name) for name in files}

    def __enter__(self) -> StudyRows:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.places.close()
        self.items_seen.close()
        for table in self.joined.values():
            table.close()
        self.archive.close()

    def _member(self, name: str) -> IO[bytes]:
        """A member of the zip, as a stream that refuses to unpack past the import's limit in all."""
        return io.BufferedReader(_Limited(self.archive.open(name), self, name))

    def _rows(self, name: str) -> Iterator[tuple[int, dict[str, Any] | str]]:
        return read_rows(self._member(name), self.formats[name], check_header=no_duplicate_columns)

    def _read_joined(self) -> None:
        """Each joined file's verdicts by item id, on disk (a file of millions does not stay in memory)."""
        for judge in self.mapping.judges:
            if not judge.file or judge.file in self.joined:
                continue
            key = judge.item_id or self.mapping.item_id
            table = self.joined[judge.file] = DiskMap(Joined)
            wanted = [(j.winner, j.rationale) for j in self.mapping.judges if j.file == judge.file]
            columns = {column for pair in wanted for column in pair if column}
            unit = self.units[judge.file]
            batch: dict[str, Joined] = {}
            unseen = set(columns)  # a column no row has is a slip in study.json, not a judge that said nothing
            for line, row in self._rows(judge.file):
                place = f"{judge.file} {unit} {line}"
                if isinstance(row, str):
                    self.errors.append(RowError(line, row, place=place))
                    continue
                item = _item_id(row, key)
                if item is None:
                    self.errors.append(RowError(line, f"no item id ({key!r}).", place=place))
                    continue
                unseen -= row.keys()
                found = table.get(item) if item not in batch else batch[item]
                if found is not None:
                    message = f"item {item!r} again (first on {unit} {found.line})."
                    self.errors.append(RowError(line, message, place=place))
                    continue
                batch[item] = Joined(line, {column: row.get(column) for column in columns})
                if len(batch) >= JOINED_AT_A_TIME:
                    table.put_many(batch.items())
                    batch = {}
            table.put_many(batch.items())
            if unseen:
                self.errors.append(RowError(None, f"{judge.file} has no column(s) {', '.join(sorted(unseen))}."))

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any] | str]]:
        self._read_joined()
        mapping = self.mapping
        # A column study.json names that no row has is a slip in study.json, not a judge that said nothing.
        unseen = {mapping.item_id, *mapping.columns.values()}
        unseen |= {column for judge in mapping.judges if not judge.file for column in (judge.winner, judge.rationale)}
        unseen.discard("")
        number = 0
        for batch in _batches(self._rows(mapping.items), JOINED_AT_A_TIME):
            for _, row in batch:
                if unseen and isinstance(row, dict):
                    unseen -= row.keys()
            for place, out in self._batch_rows(batch):
                number += 1
                self.places.add((number, place))
                yield number, out
        if unseen:
            self.errors.append(RowError(None, f"{mapping.items} has no column(s) {', '.join(sorted(unseen))}."))
        self._unmatched()

    def _batch_rows(self, batch: list[tuple[int, dict[str, Any] | str]]) -> Iterator[tuple[str, dict[str, Any] | str]]:
        """(place, generic row or error) for each judge that labelled each item of the batch: the items
        seen before and the joined files' rows looked up together, a query a file for the batch."""
        mapping = self.mapping
        ids = {item for _, row in batch if (item := _item_id(row, mapping.item_id)) is not None}
        seen = self.items_seen.get_many(ids)
        joined = {name: table.get_many(ids) for name, table in self.joined.items()}
        new: dict[str, Joined] = {}
        for line, row in batch:
            place = f"{mapping.items} {self.units[mapping.items]} {line}"
            if isinstance(row, str):
                yield place, row
                continue
            item = _item_id(row, mapping.item_id)
            if item is None:
                yield place, f"no item id ({mapping.item_id!r})."
                continue
            first = seen.get(item) or new.get(item)
            if first is not None:
                yield place, f"item {item!r} again (first on {self.units[mapping.items]} {first.line})."
                continue
            new[item] = Joined(line)
            yield from self._item_rows(place, row, item, {name: found.get(item) for name, found in joined.items()})
        self.items_seen.put_many(new.items())

    def _item_rows(
        self, place: str, row: dict[str, Any], item: str, joined: dict[str, Joined | None]
    ) -> Iterator[tuple[str, dict[str, Any] | str]]:
        """(place, generic row or error) for each judge that labelled this item."""
        mapping = self.mapping
        common: dict[str, Any] = {}
        for column in STUDY_COLUMNS:
            source = mapping.columns.get(column, column)
            if source in row:
                common[column] = row[source]
        if "prompt_id" not in common:
            common["prompt_id"] = item
        if self.formats[mapping.items] == "csv":  # a CSV cell cannot be null: an empty one is an empty answer
            common = empty_text(common, RESPONSE_COLUMNS)
        for judge in mapping.judges:
            if judge.file:
                found = joined[judge.file]
                if found is None:
                    continue  # this judge did not label the item
                values, where = found.values or {}, f"{judge.file} {self.units[judge.file]} {found.line}"
            else:
                values, where = row, place
            verdict = values.get(judge.winner)
            if verdict is None or (isinstance(verdict, str) and not verdict.strip()):
                continue
            read = {**mapping.verdicts, **judge.verdicts}.get(_as_text(verdict), verdict)
            if not isinstance(read, str) or read.strip().lower() not in WINNERS:
                unread = f"verdict {verdict!r} is none of {', '.join(WINNERS)}: say what it means in "
                unread += f"{STUDY_FILE}'s verdicts."
                yield f"{where} (judge {judge.judge})", unread
                continue
            out = {**common, "judge": judge.judge, "winner": read}
            if judge.kind:
                out["judge_kind"] = judge.kind
            if judge.rationale and values.get(judge.rationale) not in (None, ""):
                out["rationale"] = values[judge.rationale]
            yield f"{where} (judge {judge.judge})", out

    def _unmatched(self) -> None:
        """A joined file's item that the items file lacks: a verdict on nothing, refused with its line."""
        for name, table in self.joined.items():
            unit = self.units[name]
            for part in _batches(table.items(), JOINED_AT_A_TIME):
                known = self.items_seen.get_many([item for item, _ in part])
                for item, joined in part:
                    if item not in known:
                        message = f"item {item!r} is not in {self.mapping.items}."
                        self.errors.append(RowError(joined.line, message, place=f"{name} {unit} {joined.line}"))

    def places_of(self, numbers: Iterable[int]) -> dict[int, str]:
        wanted = set(numbers)
        return {number: place for number, place in self.places if number in wanted} if wanted else {}


def _item_id(row: dict[str, Any] | str, column: str) -> str | None:
    """A row's item id as text (an integer id and its text alike), None where it has none."""
    if isinstance(row, str) or row.get(column) in (None, ""):
        return None
    return str(row[column]).strip()


def _format(name: str) -> str:
    try:
        return detect_format(name)
    except ValueError as error:
        raise FileError(f"{name}: {error}") from None


def _as_text(value: Any) -> str:
    """A verdict as the mapping's keys spell it: 1, 1.0 and "1" alike."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip()


def _batches(items: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


class _Limited(io.RawIOBase):
    """A zip member's bytes, refused past the import's limit counted over the whole study (a member's
    stated size is not trusted: a small zip may unpack to gigabytes)."""

    def __init__(self, stream: IO[bytes], study: StudyRows, name: str) -> None:
        self.stream, self.study, self.name = stream, study, name

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self.stream.read(len(buffer))
        self.study.read_bytes += len(data)
        if self.study.read_bytes > self.study.limit:
            raise FileError(f"{self.name}: the study unpacks to more than the import limit ({self.study.limit} bytes).")
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.stream.close()
        super().close()
