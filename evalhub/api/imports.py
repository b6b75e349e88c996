"""Uploads through the API: a benchmark file, pairwise judgments, scores or Inspect logs, checked by the
import pages' own forms (the operation's parameters, defaults filled, are the form's data) and written by
the same actions, under the same size limit, all or nothing, with the same row-by-row errors (422 lists
them). A file over EVALHUB_API_INLINE_IMPORT_BYTES, or one sent with `background`, is imported by a
worker: the answer is 202 with the upload and its job to follow (evalhub.api.uploads)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.shortcuts import get_object_or_404
from ninja import File, Form, Router, Schema
from ninja.files import UploadedFile
from ninja.responses import Status

from evalhub.accounts.models import Scope
from evalhub.accounts.roles import ADMIN
from evalhub.api.access import allowed
from evalhub.api.jobs import JobOut
from evalhub.api.models import Upload
from evalhub.api.uploads import (
    Imported,
    Rejected,
    do_queue_upload,
    goes_to_background,
    import_now,
    rejected,
)
from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.forms import ImportForm
from evalhub.catalog.models import TaskType
from evalhub.core.files.judgments import AUTO
from evalhub.judgelab.forms import JudgmentImportForm, ScoreImportForm

router = Router(tags=["imports"])


class UploadOut(Schema):
    """An upload imported in the background: its job to follow, then what it came to (`imported`, or
    `rejected` with the reasons, exactly as an import done at once answers)."""

    id: int
    what: str
    filename: str
    size: int
    created_at: datetime
    job: JobOut
    imported: Imported | None = None
    rejected: Rejected | None = None

    @staticmethod
    def resolve_imported(upload: Upload) -> dict[str, Any] | None:
        return upload.outcome.get("imported")

    @staticmethod
    def resolve_rejected(upload: Upload) -> dict[str, Any] | None:
        return upload.outcome.get("rejected")


def _imported(what: str, form: Any, user: Any, background: bool) -> Any:
    """Imported now (200), refused (422), or, for a large file or when asked, queued (202)."""
    if not form.is_valid() or not goes_to_background(form.cleaned_data["file"].size, background):
        came = import_now(form, user)
        return came if isinstance(came, Imported) else Status(422, came)
    try:
        upload = do_queue_upload(what, form, user)
    except ImportRejected as refused:
        return Status(422, rejected(refused.errors))
    return Status(202, Upload.objects.select_related("job__created_by").get(pk=upload.pk))


RESPONSES = {200: Imported, 202: UploadOut, 422: Rejected}


@router.post("/imports/benchmark", response=RESPONSES, auth=allowed(ADMIN, scope=Scope.WRITE))
def import_benchmark(
    request,
    file: File[UploadedFile],
    benchmark: Form[str],
    name: Form[str] = "",
    task_type: Form[str] = TaskType.OTHER,
    create_models: Form[bool] = False,
    background: Form[bool] = False,
):
    """A benchmark file (JSONL, CSV or Parquet: prompts, privileged fields, responses), as the import page."""
    fields = {"benchmark": benchmark, "name": name, "task_type": task_type, "create_models": create_models}
    return _imported("benchmark", ImportForm(fields, {"file": file}), request.user, background)


@router.post("/imports/judgments", response=RESPONSES, auth=allowed(ADMIN, scope=Scope.WRITE))
def import_judgments(
    request,
    file: File[UploadedFile],
    benchmark: Form[str] = "",
    layout: Form[str] = AUTO,
    judges_are: Form[str] = AUTO,
    create_models: Form[bool] = False,
    background: Form[bool] = False,
):
    """Pairwise judgments (generic, MT-Bench, AlpacaEval or Arena layout), as the judge lab's import page."""
    fields = {"benchmark": benchmark, "layout": layout, "judges_are": judges_are, "create_models": create_models}
    return _imported("judgments", JudgmentImportForm(fields, {"file": file}), request.user, background)


@router.post("/imports/scores", response=RESPONSES, auth=allowed(ADMIN, scope=Scope.WRITE))
def import_scores(
    request,
    file: File[UploadedFile],
    benchmark: Form[str] = "",
    task_type: Form[str] = TaskType.OTHER,
    create_models: Form[bool] = False,
    background: Form[bool] = False,
):
    """Scores of single responses: a score file, or Inspect AI logs (one `.eval`/`.json`, or a zipped folder)."""
    fields = {"benchmark": benchmark, "task_type": task_type, "create_models": create_models}
    return _imported("scores", ScoreImportForm(fields, {"file": file}), request.user, background)


@router.get("/imports/uploads/{upload_id}", response=UploadOut, auth=allowed(ADMIN))
def get_upload(request, upload_id: int):
    """An upload imported in the background: its job, and once it ran, what it came to."""
    return get_object_or_404(Upload.objects.select_related("job__created_by"), pk=upload_id)
