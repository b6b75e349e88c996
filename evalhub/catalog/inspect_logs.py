"""Inspect AI eval logs as score rows: each sample's output a response, each scorer a rater.

Read with inspect-ai's own log reader (an optional dependency: `pip install inspect-ai`), so every
format it writes is read as it reads it: `.eval` (its zip of sample shards) and `.json`, one log or a
folder of them (an eval set's logs, read one by one). A sample becomes a prompt (`id`, or `id#eN`
for epoch N > 1, so repeated epochs stay apart) whose response is the log's model's completion; each
score becomes a row of evalhub's score layout (evalhub.core.files.scores) with the scorer as rater
and criterion, its explanation as the rationale, and its value made a number as Inspect makes it
(`value_to_float`: C 1, P 0.5, I and N 0; a dict of values gives one criterion per key,
`scorer-key`). Samples with no output or no score are left out, and the summary says how many.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from evalhub.core.files.slugs import slug_for

UNIT = "sample"


class InspectMissing(RuntimeError):
    pass


def _inspect() -> tuple[Any, Any]:
    try:
        from inspect_ai.log import read_eval_log
        from inspect_ai.scorer import value_to_float
    except ImportError as error:
        raise InspectMissing(
            "reading Inspect logs needs the inspect-ai package (pip install inspect-ai); evalhub does not install it."
        ) from error
    return read_eval_log, value_to_float()


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


def log_files(path: Path) -> list[Path]:
    """The log, or every `.eval` and `.json` log under a folder (an eval set's, in name order)."""
    if not path.is_dir():
        return [path]
    return sorted(file for file in path.rglob("*") if file.suffix in (".eval", ".json") and file.is_file())


def score_rows(path: Path) -> Iterator[tuple[int, dict[str, Any] | str]]:
    """(sample number, a score row or why the sample cannot be one), over every log at `path`."""
    read_eval_log, to_float = _inspect()
    number = 0
    for file in log_files(path):
        try:
            log = read_eval_log(str(file))
        except Exception as error:  # whatever the reader raises, the file is named and nothing is written
            number += 1
            yield number, f"{file.name} is not an Inspect log Inspect can read: {type(error).__name__}: {error}"
            continue
        model = log.eval.model
        for sample in log.samples or []:
            number += 1
            yield from _sample_rows(number, file.name, model, sample, to_float)


def _sample_rows(number: int, file: str, model: str, sample: Any, to_float: Any) -> Iterator[tuple[int, dict | str]]:
    completion = sample.output.completion if sample.output is not None else ""
    if not completion or not sample.scores:
        return
    prompt_id = str(sample.id) if sample.epoch == 1 else f"{sample.id}#e{sample.epoch}"
    prompt = sample.input if isinstance(sample.input, str) else "\n\n".join(m.text for m in sample.input)
    for scorer, score in sample.scores.items():
        values = score.value if isinstance(score.value, dict) else {None: score.value}
        for key, value in values.items():
            if not _readable(value):  # Inspect's own conversion reads anything else as 0, with a warning
                yield number, f"{file}, sample {sample.id}: scorer {scorer!r} gave {value!r}, which is no score."
                continue
            number_value = to_float(value)
            name = slug_for(scorer if key is None else f"{scorer}-{key}")
            yield (
                number,
                {
                    "prompt_id": prompt_id,
                    "prompt": prompt,
                    "model": slug_for(model),
                    "response": completion,
                    "rater": slug_for(scorer),
                    "rater_kind": "model",
                    "criterion": name,
                    "score": number_value,
                    "rationale": score.explanation or "",
                },
            )


GRADES = {"C", "I", "P", "N"}  # as written: Inspect reads "c" as no grade
WORDS = {"yes", "no", "true", "false"}  # in any case


def _readable(value: Any) -> bool:
    """A value Inspect's value_to_float reads as meant: a number, a boolean, C/I/P/N, yes/no, or a
    number written as text."""
    if isinstance(value, (bool, int, float)):
        return value == value  # NaN is no score
    if isinstance(value, str):
        if value.strip() in GRADES or value.strip().lower() in WORDS:
            return True
        try:
            float(value)
        except ValueError:
            return False
        return True
    return False
