"""Inspect AI eval logs as score rows: each sample's output a response, each scorer a rater.

Read with inspect-ai's own log reader and sample model (in requirements.txt, imported on first use),
so every format it writes is read as it reads it: `.eval` (its zip of sample shards) and
`.json`, one log or a folder of them (an eval set's logs, read one by one). A `.eval` log is read a
sample at a time: its header by Inspect's reader, each sample entry of its zip by Inspect's
`EvalSample`, so memory holds one sample, however many the log has (an agent's samples carry their
whole transcript). Inspect's own whole-log reader holds them all, and its by-id reader parses the
zip's directory again for every call. A `.json` log's samples are read one at a time from its
`samples` array, as Inspect reads its header. A sample becomes a prompt (`task/id`, or
`task/id#eN` for epoch N > 1, so an eval set's tasks and repeated epochs stay apart) whose response
is the log's model's completion; each score becomes a row of evalhub's score layout
(evalhub.core.files.scores) with the scorer as rater and criterion, its explanation as the rationale,
and its value made a number as Inspect makes it (`value_to_float`: C 1, P 0.5, I and N 0; a dict of
values gives one criterion per key, `scorer-key`). Samples with no output or no score are left out,
and the summary says how many.
"""

from __future__ import annotations

import gzip
import io
import math
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path, PurePosixPath
from typing import IO, Any

from evalhub.core.files.slugs import slug_for
from evalhub.core.files.spool import Spool

UNIT = "sample"


class InspectMissing(RuntimeError):
    pass


def _inspect() -> tuple[Any, Any]:
    try:
        from inspect_ai.log import read_eval_log
        from inspect_ai.scorer import value_to_float
    except ImportError as error:
        raise InspectMissing(
            "reading Inspect logs needs the inspect-ai package: pip install -r requirements.txt"
        ) from error
    return read_eval_log, value_to_float()


SAMPLES_DIR = "samples/"  # where a `.eval` zip keeps one JSON entry a sample (and epoch)


def _deserializing_context() -> dict[str, Any]:
    """The context Inspect's reader validates samples with (no new message ids made up); it is private,
    so a later inspect-ai without it reads the same, more slowly. A new one for each sample: it carries
    a cache of the messages validated with it, which kept every sample's transcript when shared."""
    try:
        from inspect_ai._util.constants import get_deserializing_context
    except ImportError:  # pragma: no cover
        return {}
    return get_deserializing_context()


def _eval_samples(file: Path) -> Iterator[Any]:
    """A `.eval` log's samples, one at a time, in the zip's order; a name the zip holds twice is read once,
    its last entry, as Inspect's reader does (`_entries_twice` refuses such a log before)."""
    from inspect_ai.log import EvalSample

    with zipfile.ZipFile(file) as archive:
        entries = {e.filename: e for e in archive.infolist() if e.filename.startswith(SAMPLES_DIR)}
        for entry in entries.values():
            if entry.filename.endswith(".json"):
                yield EvalSample.model_validate_json(archive.read(entry), context=_deserializing_context())


def _json_samples(file: Path, read_eval_log: Any) -> Iterator[Any]:
    """A `.json` log's samples, one at a time from its `samples` array (ijson, which Inspect's own header
    reader uses), each validated by Inspect's `EvalSample` as its whole-log reader validates them. What
    ijson cannot read (NaN, which Inspect writes for a NaN score; a number past 64 bits; a broken file)
    is read by Inspect's whole-log reader from there on, which reads such logs or names what is wrong."""
    import ijson
    from inspect_ai.log import EvalSample

    given = 0
    try:
        with file.open("rb") as stream:
            for item in ijson.items(stream, "samples.item", use_float=True):
                sample = EvalSample.model_validate(item, context=_deserializing_context())
                given += 1
                yield sample
        return
    except (ijson.JSONError, ValueError):  # ijson's errors are ValueErrors too, as are a sample's refusals
        pass
    yield from (read_eval_log(str(file)).samples or [])[given:]


def _log(file: Path, read_eval_log: Any) -> tuple[Any, Iterator[Any]]:
    """A log's header (Inspect's reader streams it) and its samples, a sample at a time."""
    if file.suffix == ".eval" and zipfile.is_zipfile(file):
        return read_eval_log(str(file), header_only=True), _eval_samples(file)
    try:
        header = read_eval_log(str(file), header_only=True)
    except Exception:  # noqa: BLE001 - Inspect's whole-log reader says what is wrong, or reads it
        # Inspect's header reader stops at `samples`, so a `.json` log whose keys are in another order
        # (`jq -S` sorts `version` after it) has no header before it: read whole, as it always was.
        log = read_eval_log(str(file))
        return log, iter(log.samples or [])
    return header, _json_samples(file, read_eval_log)


def is_inspect_log(path: Path) -> bool:
    """A folder, a `.eval` file, or a `.json` file that opens like an Inspect log (an object with an
    `eval` header), rather than a JSON array of rows."""
    if path.is_dir() or path.suffix == ".eval":
        return True
    if path.suffix == ".json":
        with path.open("rb") as stream:
            head = stream.read(4096).lstrip()
        return head.startswith(b"{") and b'"eval"' in head
    return False


LOG_SUFFIXES = (".eval", ".json")
# What `inspect eval-set` writes beside its logs: the set's manifest and the folder's list of logs. They
# describe the logs; they are not logs, and a folder holding them is read for its logs.
MANIFESTS = ("eval-set.json", "logs.json")
GZIPPED_LOGS = (".eval.gz", ".json.gz")  # a log compressed for keeping or sending


def is_log_name(name: str) -> bool:
    return name.lower().endswith(LOG_SUFFIXES) and PurePosixPath(name).name not in MANIFESTS


def is_uploaded_log(filename: str, head: bytes) -> bool:
    """An upload that holds Inspect logs: a `.eval`, a `.zip` of a log folder, or a `.json` that opens
    like a log (an object with an `eval` header) rather than a JSON array of score rows."""
    name = filename.lower()
    if name.endswith((".eval", ".zip")):
        return True
    return name.endswith(".json") and head.lstrip().startswith(b"{") and b'"eval"' in head[:4096]


def unpack_upload(filename: str, data: bytes, folder: Path, limit: int) -> Path:
    """Write an uploaded log (or unpack a zip of a log folder) under `folder`; the path to read. A zip's
    members other than logs are skipped. Refused (ValueError, with the member named): a zip whose
    members do not make a tree (a name twice, a file that another member uses as a folder), one that
    would land outside `folder`, and one whose members unpack to more than `limit` bytes, counted as
    they are unpacked (a member's stated size is not trusted) or that is damaged. Nothing is kept of
    a refused zip but what the caller's temporary folder holds."""
    name = Path(filename).name or "log.eval"
    if not name.lower().endswith(".zip"):
        (folder / name).write_bytes(data)
        return folder / name
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))  # in memory: nothing to close
    except zipfile.BadZipFile:
        raise ValueError(f"{name} is not a zip file.") from None
    members = [m for m in archive.infolist() if not m.is_dir() and is_log_name(m.filename)]
    if not members:
        raise ValueError(f"{name} holds no Inspect log (.eval or .json).")
    root = folder / "logs"
    _check_tree(name, [m.filename for m in archive.infolist()], root)
    left = limit
    for member in members:
        target = root / member.filename
        target.parent.mkdir(parents=True, exist_ok=True)
        left = _unpack_member(name, archive, member, target, left, limit)
    return root


def _check_tree(name: str, members: list[str], root: Path) -> None:
    """The zip's member names as one folder tree inside `root`, or ValueError naming the first that is not."""
    files: set[str] = set()
    folders: set[str] = set()
    for member in members:
        target = (root / member).resolve()
        if not target.is_relative_to(root.resolve()):
            raise ValueError(f"{name}: {member!r} would be written outside the folder.")
        parts = PurePosixPath(member.rstrip("/")).parts
        above = {"/".join(parts[:end]) for end in range(1, len(parts))}
        path = "/".join(parts)
        if member.endswith("/"):
            above.add(path)
        elif path in files or path in folders:
            raise ValueError(f"{name}: {member!r} is in the zip twice, or is also a folder in it.")
        else:
            files.add(path)
        if clash := sorted(above & files):
            raise ValueError(f"{name}: {member!r} is inside {clash[0]!r}, which the zip also holds as a file.")
        folders |= above


UNPACK_CHUNK = 1 << 20


def _unpack_member(
    name: str, archive: zipfile.ZipFile, member: zipfile.ZipInfo, target: Path, left: int, limit: int
) -> int:
    """Unpack one member to `target`, counting its bytes as they come; the bytes left under the limit."""
    try:
        with archive.open(member) as source, target.open("wb") as out:
            while chunk := source.read(min(UNPACK_CHUNK, left + 1)):
                left -= len(chunk)
                if left < 0:
                    raise ValueError(f"{name} unpacks to more than the import limit of {limit / 1e6:.1f} MB.")
                out.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as error:
        raise ValueError(f"{name}: {member.filename!r} cannot be unpacked ({error}).") from None
    return left


def log_files(path: Path) -> list[Path]:
    """The log, or every `.eval` and `.json` log under a folder (an eval set's, in name order; its
    manifests are not logs)."""
    if not path.is_dir():
        return [path]
    return sorted(file for file in path.rglob("*") if is_log_name(file.name) and file.is_file())


def gzipped_log_head(filename: str, data: bytes | IO[bytes]) -> tuple[str, bytes] | None:
    """A `.eval.gz` or `.json.gz` upload's name without `.gz` and the first bytes inside (to tell a log
    from a gzipped array of score rows); None for any other name."""
    if not filename.lower().endswith(GZIPPED_LOGS):
        return None
    stream = io.BytesIO(data) if isinstance(data, bytes) else data
    try:
        with gzip.GzipFile(fileobj=stream, mode="rb") as inner:
            head = inner.read(4096)
    except (OSError, EOFError, zlib.error):
        head = b""  # not a readable gzip: whoever reads it whole says so
    finally:
        stream.seek(0)
    return filename[: -len(".gz")], head


class LogBytes(io.RawIOBase):
    """The logs' bytes, one file after another, as a stream read from its start (the import's digest):
    a folder of logs up to the import limit is never held in memory whole."""

    def __init__(self, files: list[Path]) -> None:
        self.files = files
        self._index = 0
        self._current: io.BufferedReader | None = None

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        if (offset, whence) != (0, io.SEEK_SET):
            raise io.UnsupportedOperation("the logs' bytes are read again only from their start")
        self._close_current()
        self._index = 0
        return 0

    def readinto(self, buffer: Any) -> int:
        while self._index < len(self.files):
            if self._current is None:
                self._current = self.files[self._index].open("rb")
            if read := self._current.readinto(buffer):
                return read
            self._close_current()
            self._index += 1
        return 0

    def _close_current(self) -> None:
        if self._current is not None:
            self._current.close()
            self._current = None

    def close(self) -> None:
        self._close_current()
        super().close()


def log_bytes(path: Path) -> io.BufferedReader:
    """The bytes of every log at `path`, in `log_files` order, as one stream (the caller closes it)."""
    return io.BufferedReader(LogBytes(log_files(path)))


class LogRows:
    """(number, a score row or why a sample cannot be one) over every log at `path`, once iterated;
    `places_of` names numbers' files and sample ids for messages (a number counts across the folder),
    `samples` and `scored` count what the logs held. Every number's place goes to disk as it is read
    (messages need a few, after the whole folder is read); `close` removes them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.places: Spool[tuple[int, str]] = Spool(tuple[int, str])
        self.samples = 0
        self.scored = 0

    def __iter__(self) -> Iterator[tuple[int, dict[str, Any] | str]]:
        read_eval_log, to_float = _inspect()
        number = 0
        for file in log_files(self.path):
            name = str(file.relative_to(self.path)) if self.path.is_dir() else file.name
            number += 1
            self.places.add((number, name))
            # The last sample read whole: samples are read one at a time, so the reader may fail past it
            # (a log cut short), and the error is placed after it, not on it.
            last_read = ""
            try:
                log, samples = _log(file, read_eval_log)
                if twice := _entries_twice(file):
                    yield number, f"the log holds {', '.join(twice)} twice; Inspect's reader keeps only one of each."
                # A sample id once per epoch; this set (a short key a sample) is what memory keeps of a log.
                seen: set[tuple[str, int]] = set()
                for sample in samples:
                    number += 1
                    self.samples += 1
                    label = f"{sample.id}" + (f" (epoch {sample.epoch})" if sample.epoch != 1 else "")
                    self.places.add((number, f"{name}, sample {label}"))
                    last_read = ""  # an error now is this sample's own
                    if (str(sample.id), sample.epoch) in seen:
                        yield number, "a second sample with this id; a sample id names one sample of a task."
                        last_read = label
                        continue
                    seen.add((str(sample.id), sample.epoch))
                    rows = list(_sample_rows(log.eval.task, log.eval.model, sample, to_float))
                    last_read = label
                    self.scored += bool(rows)
                    for row in rows:
                        yield number, row
            except Exception as error:  # whatever the reader raises, the file is named and nothing is written
                if last_read:
                    number += 1
                    self.places.add((number, f"{name}, after sample {last_read}"))
                yield number, f"not an Inspect log Inspect can read: {type(error).__name__}: {error}"

    def places_of(self, numbers: Iterable[int]) -> dict[int, str]:
        """The places of these numbers (the file, and the sample where the number is one's)."""
        wanted = set(numbers)
        return {number: place for number, place in self.places if number in wanted} if wanted else {}

    def close(self) -> None:
        self.places.close()


def _entries_twice(file: Path) -> list[str]:
    """A `.eval` file's sample entries that its zip holds twice (a zip may repeat a name; the reader
    then sees the last), which would otherwise replace a sample without a word."""
    if file.suffix != ".eval" or not zipfile.is_zipfile(file):
        return []
    with zipfile.ZipFile(file) as archive:
        names = Counter(archive.namelist())
    return sorted(name for name, count in names.items() if count > 1 and name.startswith("samples/"))


def _sample_rows(task: str, model: str, sample: Any, to_float: Any) -> Iterator[dict | str]:
    completion = sample.output.completion if sample.output is not None else ""
    if not completion or not sample.scores:
        return
    # The task is part of the key: an eval set's tasks each number their samples from 1.
    prompt_id = f"{task}/{sample.id}" if sample.epoch == 1 else f"{task}/{sample.id}#e{sample.epoch}"
    prompt = sample.input if isinstance(sample.input, str) else "\n\n".join(m.text for m in sample.input)
    for scorer, score in sample.scores.items():
        values = score.value if isinstance(score.value, dict) else {None: score.value}
        for key, value in values.items():
            if not readable(value):  # Inspect's own conversion reads it as 0, with only a warning in its log
                yield f"scorer {scorer!r} gave {value!r}, which is no score."
                continue
            name = slug_for(scorer if key is None else f"{scorer}-{key}")
            yield {
                "prompt_id": prompt_id,
                "prompt": prompt,
                "model": slug_for(model),
                "response": completion,
                "rater": slug_for(scorer),
                "rater_kind": "model",
                "criterion": name,
                "score": to_float(value),
                "rationale": score.explanation or "",
            }


GRADES = {"C", "I", "P", "N"}  # exactly as written: Inspect reads "c" or " C" as no grade
WORDS = {"yes", "no", "true", "false"}  # in any case, but not padded: Inspect reads " yes" as no word


def readable(value: Any) -> bool:
    """A value Inspect's `value_to_float` reads as meant, branch for branch: C/I/P/N, a finite number or
    boolean, yes/no/true/false in any case, or text `float` reads as a finite number. Anything else it
    reads as 0 (NaN and infinities as themselves), which evalhub refuses rather than stores."""
    if isinstance(value, str):
        if value in GRADES or value.lower() in WORDS:
            return True
        try:
            return math.isfinite(float(value))
        except ValueError:
            return False
    return isinstance(value, (bool, int, float)) and math.isfinite(value)
