"""Uploads through the API: a benchmark file, pairwise judgments, scores or Inspect logs, checked by the
import pages' own forms (the operation's parameters, defaults filled, are the form's data) and written by
the same actions, under the same size limit, all or nothing,
with the same row-by-row errors (422 lists them)."""

from __future__ import annotations

from typing import Any

from ninja import File, Form, Router, Schema
from ninja.files import UploadedFile
from ninja.responses import Status

from evalhub.accounts.models import Scope
from evalhub.accounts.roles import ADMIN
from evalhub.api.access import allowed
from evalhub.catalog.actions.importing import ImportRejected
from evalhub.catalog.forms import ImportForm
from evalhub.catalog.inspect_logs import InspectMissing
from evalhub.catalog.models import TaskType
from evalhub.core.files.judgments import AUTO
from evalhub.judgelab.forms import JudgmentImportForm, ScoreImportForm

router = Router(tags=["imports"])
MAX_ERRORS = 200  # row errors listed in one answer (`error_count` says how many there were)


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


def _rejected(errors: list[Any]) -> Status[Rejected]:
    problems = [RowProblem(line=e.line, place=e.place, message=e.message) for e in errors[:MAX_ERRORS]]
    detail = f"{len(errors)} problem(s); nothing was imported."
    return Status(422, Rejected(detail=detail, error_count=len(errors), errors=problems))


def _form_errors(form: Any) -> Status[Rejected]:
    problems = [
        RowProblem(line=None, place=field, message=message)
        for field, messages in form.errors.items()
        for message in messages
    ]
    detail = "the upload's fields are not what the import takes"
    return Status(422, Rejected(detail=detail, error_count=len(problems), errors=problems))


def _imported(form: Any, user: Any) -> Imported | Status[Rejected]:
    """The upload checked by its page's form and imported by the form (the page's one path)."""
    if not form.is_valid():
        return _form_errors(form)
    try:
        summary = form.import_file(user)
    except ImportRejected as rejected:
        return _rejected(rejected.errors)
    except InspectMissing as missing:
        problem = RowProblem(line=None, place="", message=str(missing))
        return Status(422, Rejected(detail=str(missing), error_count=1, errors=[problem]))
    slug = summary.benchmark.slug
    return Imported(benchmark=slug, rows=summary.rows, summary=summary.describe(), counts=summary.counts)


RESPONSES = {200: Imported, 422: Rejected}


@router.post("/imports/benchmark", response=RESPONSES, auth=allowed(ADMIN, scope=Scope.WRITE))
def import_benchmark(
    request,
    file: File[UploadedFile],
    benchmark: Form[str],
    name: Form[str] = "",
    task_type: Form[str] = TaskType.OTHER,
    create_models: Form[bool] = False,
):
    """A benchmark file (JSONL, CSV or Parquet: prompts, privileged fields, responses), as the import page."""
    fields = {"benchmark": benchmark, "name": name, "task_type": task_type, "create_models": create_models}
    return _imported(ImportForm(fields, {"file": file}), request.user)


@router.post("/imports/judgments", response=RESPONSES, auth=allowed(ADMIN, scope=Scope.WRITE))
def import_judgments(
    request,
    file: File[UploadedFile],
    benchmark: Form[str] = "",
    layout: Form[str] = AUTO,
    judges_are: Form[str] = AUTO,
    create_models: Form[bool] = False,
):
    """Pairwise judgments (generic, MT-Bench, AlpacaEval or Arena layout), as the judge lab's import page."""
    fields = {"benchmark": benchmark, "layout": layout, "judges_are": judges_are, "create_models": create_models}
    return _imported(JudgmentImportForm(fields, {"file": file}), request.user)


@router.post("/imports/scores", response=RESPONSES, auth=allowed(ADMIN, scope=Scope.WRITE))
def import_scores(
    request,
    file: File[UploadedFile],
    benchmark: Form[str] = "",
    task_type: Form[str] = TaskType.OTHER,
    create_models: Form[bool] = False,
):
    """Scores of single responses: a score file, or Inspect AI logs (one `.eval`/`.json`, or a zipped folder)."""
    fields = {"benchmark": benchmark, "task_type": task_type, "create_models": create_models}
    return _imported(ScoreImportForm(fields, {"file": file}), request.user)
