"""What an upload through the API comes to, whether it is imported at once or by a worker.

An upload is checked by its import page's own form and imported by that form (the page's one path), so
the same file lands the same rows, under the same size limit, all or nothing, with the same row-by-row
errors. A large upload (over EVALHUB_API_INLINE_IMPORT_BYTES, or one sent with `background`) is not
imported inside the request: it is stored in the database in parts (the one store every worker on every
machine reads), and imported by a worker as a job of kind `upload`, which a pipeline follows like any
other (its progress is the bytes read). The outcome the request would have answered is kept on the
upload, and the parts are deleted once it is known. A worker killed mid-import leaves nothing half
written (the import is one transaction): its chunk is sent again and the import runs again from the parts.
"""

from __future__ import annotations

import hashlib
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import IO, Any

from django import forms
from django.conf import settings
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils.datastructures import MultiValueDict
from ninja import Schema

from evalhub.api.models import Upload, UploadPart
from evalhub.catalog.actions.importing import ImportRejected, check_import_size
from evalhub.catalog.forms import ImportForm
from evalhub.catalog.inspect_logs import InspectMissing
from evalhub.core.files.rows import RowError
from evalhub.core.runs.outcomes import Outcome
from evalhub.jobs.actions import do_set_progress
from evalhub.jobs.chunks import Settled
from evalhub.jobs.config import RunConfig
from evalhub.jobs.models import Job, JobChunk
from evalhub.jobs.runners import JobRunner, Plan
from evalhub.judgelab.forms import JudgmentImportForm, ScoreImportForm
from evalhub.system.read_progress import ReadProgress

UPLOAD = "upload"  # the job kind
MAX_ERRORS = 200  # row errors listed in one answer (`error_count` says how many there were)
PART_BYTES = 4 * 1024 * 1024  # a part's size: a worker holds one in memory at a time
# Each import's form (its page's): the upload's fields are checked and imported by it, in a request or a worker.
FORMS: dict[str, type[forms.Form]] = {
    "benchmark": ImportForm,
    "judgments": JudgmentImportForm,
    "scores": ScoreImportForm,
}


class Imported(Schema):
    benchmark: str
    rows: int
    summary: str  # as the import page says it
    counts: dict[str, Any]


class RowProblem(Schema):
    line: int | None
    place: str
    message: str


class Rejected(Schema):
    detail: str
    error_count: int
    errors: list[RowProblem]


def rejected(errors: list[Any]) -> Rejected:
    problems = [RowProblem(line=e.line, place=e.place, message=e.message) for e in errors[:MAX_ERRORS]]
    return Rejected(detail=f"{len(errors)} problem(s); nothing was imported.", error_count=len(errors), errors=problems)


def form_errors(form: forms.Form) -> Rejected:
    problems = [
        RowProblem(line=None, place=name, message=str(message))
        for name, messages in form.errors.items()
        for message in messages
    ]
    detail = "the upload's fields are not what the import takes"
    return Rejected(detail=detail, error_count=len(problems), errors=problems)


def import_now(form: Any, user: Any) -> Imported | Rejected:
    """The upload checked by its page's form and imported by the form: what it came to."""
    if not form.is_valid():
        return form_errors(form)
    try:
        summary = form.import_file(user)
    except ImportRejected as refused:
        return rejected(refused.errors)
    except InspectMissing as missing:
        return Rejected(
            detail=str(missing), error_count=1, errors=[RowProblem(line=None, place="", message=str(missing))]
        )
    slug = summary.benchmark.slug
    return Imported(benchmark=slug, rows=summary.rows, summary=summary.describe(), counts=summary.counts)


def goes_to_background(size: int, asked: bool) -> bool:
    return asked or size > settings.EVALHUB_API_INLINE_IMPORT_BYTES


class UploadRejected(ValueError):
    """An upload the background import cannot take (an unknown import, a file over the limit)."""


def _kib(size: int) -> int:
    return max(1, -(-size // 1024))  # progress counts KiB: a job's counter would overflow at 2 GiB of bytes


def _mb(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


@dataclass(frozen=True)
class UploadConfig(RunConfig):
    what: str
    filename: str
    size: int
    fields: dict[str, Any] = field(default_factory=dict)

    def errors(self) -> list[str]:
        found = []
        if self.what not in FORMS:
            found.append(f"{self.what!r} is not an import; choose one of {', '.join(FORMS)}.")
        limit = settings.EVALHUB_MAX_IMPORT_BYTES
        if self.size > limit:
            found.append(
                f"the file is {_mb(self.size)}, over the import limit of {_mb(limit)} (EVALHUB_MAX_IMPORT_BYTES)."
            )
        return found

    def shown(self) -> dict[str, Any]:
        return {"Import": self.what, "File": self.filename, "Size": _mb(self.size), **self.fields}


def do_queue_upload(what: str, form: Any, user: Any) -> Upload:
    """Store a valid form's file in parts and queue its import (a job of kind `upload`); ImportRejected
    for a file over the import limit (before a byte of it is stored) or one the job refuses (nothing kept)."""
    upload = form.cleaned_data["file"]
    check_import_size(upload.size)
    fields = {name: value for name, value in form.cleaned_data.items() if name != "file"}
    config = UploadConfig(what=what, filename=upload.name, size=upload.size, fields=fields)
    try:
        with transaction.atomic():  # the chunk is queued once the parts are stored with it
            stored: Upload = UploadRunner.create(config, user)
            _store_parts(stored, upload.file)
    except UploadRejected as refused:  # a configuration the kind refuses, or fewer bytes than announced
        raise ImportRejected([RowError(None, str(refused))]) from None
    return stored


def _store_parts(upload: Upload, stream: IO[bytes]) -> None:
    digest, size = hashlib.sha256(), 0
    stream.seek(0)
    index = 0
    while block := stream.read(PART_BYTES):
        UploadPart.objects.create(upload=upload, index=index, data=block)
        digest.update(block)
        size, index = size + len(block), index + 1
    if size != upload.size:
        raise UploadRejected(f"{upload.filename}: {size} bytes arrived of the {upload.size} announced.")
    upload.sha256 = digest.hexdigest()
    upload.save(update_fields=["sha256"])


class UploadDamaged(RuntimeError):
    """An upload's stored parts are not the file that was stored (a part missing or changed)."""


@contextmanager
def stored_file(upload: Upload) -> Iterator[IO[bytes]]:
    """The upload's file, from its parts, in a temporary file (deleted on leaving); UploadDamaged when
    the parts do not add up to the file stored."""
    with tempfile.TemporaryFile(prefix="evalhub-upload-") as file:
        digest = hashlib.sha256()
        # A part at a time: a worker holds one part in memory, however large the file.
        for pk in upload.parts.order_by("index").values_list("pk", flat=True):
            data = bytes(UploadPart.objects.values_list("data", flat=True).get(pk=pk))
            file.write(data)
            digest.update(data)
        if file.tell() != upload.size or digest.hexdigest() != upload.sha256:
            raise UploadDamaged(
                f"{upload.filename}: the stored parts make {file.tell()} bytes, not the {upload.size} uploaded "
                "(or their digest differs); upload the file again."
            )
        file.seek(0)
        yield file


class UploadRunner(JobRunner[Upload, dict[str, Any]]):
    """One unit: the file. Its work imports it (the import's own transaction, all or nothing; imports
    upsert by natural keys, so running it again after a lost worker changes nothing twice); recording
    it keeps the outcome on the upload and deletes the parts. A refused file fails the job with its
    reasons (resuming it would refuse it again, so there is nothing to resume)."""

    kind = UPLOAD
    run_attr = "upload"
    config = UploadConfig
    rejected = UploadRejected

    @classmethod
    def plan(cls, config: UploadConfig, run: Upload | None, size: int | None) -> Plan:
        return Plan(f"Import {config.filename} ({config.what})", [1], 1, {1: _kib(config.size)})

    @classmethod
    def load(cls, job_id: int) -> Upload:
        return Upload.objects.select_related("job", "created_by").get(job_id=job_id)

    def work(self, chunk: JobChunk) -> dict[str, Any]:
        upload = self.run
        job, total = upload.job, upload.size

        def report(read: int) -> None:
            storing = "; storing what was read" if read >= total else ""
            try:
                do_set_progress(job, min(_kib(read), _kib(total)), f"Read {_mb(read)} of {_mb(total)}{storing}.")
            except Job.DoesNotExist:  # deleted meanwhile (or not visible to this thread's connection yet)
                pass

        with stored_file(upload) as file:
            given = MultiValueDict({"file": [UploadedFile(file, upload.filename, size=upload.size)]})
            form = FORMS[upload.what](upload.fields, given)
            with ReadProgress(file, report, every=settings.EVALHUB_HEARTBEAT_SECONDS):
                came = import_now(form, upload.created_by)
        return {"imported" if isinstance(came, Imported) else "rejected": came.model_dump()}

    def write(self, chunk: JobChunk, result: dict[str, Any]) -> int:
        self.run.outcome = result
        self.run.save(update_fields=["outcome"])
        self.run.parts.all().delete()  # its rows, or its reasons, are what is kept
        return 0

    def progress_done(self, job: Job) -> int | None:
        return job.progress_total if self.run.outcome else None

    def progress(self, job: Job) -> str:
        return f"Read {_mb(self.run.size)}."

    def finish(self, job: Job) -> Settled:
        outcome = self.run.outcome
        if "imported" in outcome:
            return Settled(outcome["imported"]["summary"], outcome, Outcome(planned=1, produced=1))
        refused = outcome["rejected"]
        first = refused["errors"][0] if refused["errors"] else None
        where = f"line {first['line']}: " if first and first["line"] else ""
        cause = refused["detail"] + (f" First: {where}{first['message']}" if first else "")
        return Settled(cause, outcome, Outcome(planned=1, produced=0, invalid=1, cause=cause))
