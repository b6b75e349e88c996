"""File downloads of the numbers a page shows."""

from __future__ import annotations

import json
import logging
from datetime import datetime

from django.http import HttpResponse
from django.utils.timesince import timesince

from evalhub.core.files.tables import to_text
from evalhub.system.hf_datasets import dataset_zip

logger = logging.getLogger("evalhub.downloads")

RETRY_AFTER_S = 30  # what an export asks a client to wait while a worker computes what it exports


def download(data, fmt: str, name: str, source: str = "") -> HttpResponse:
    """`data` as a JSON or CSV attachment (CSV: a list of rows), or (`hf`) a Hugging Face dataset: a zip
    of the rows as Parquet and a dataset card (evalhub.system.hf_datasets)."""
    if fmt == "hf":
        rows = data if isinstance(data, list) else [data]
        response = HttpResponse(dataset_zip(rows, name, source or name), content_type="application/zip")
        response["Content-Disposition"] = f'attachment; filename="{name}.hf.zip"'
        return response
    if fmt == "json":
        response = HttpResponse(json.dumps(data, indent=1, default=_plain), content_type="application/json")
    else:
        response = HttpResponse(to_text(data, "csv"), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}.{fmt}"'
    return response


def _plain(value):
    """JSON for what json cannot write: numpy scalars as numbers (never as strings), times as ISO."""
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "isoformat"):
        return value.isoformat()
    raise TypeError(f"cannot export a {type(value).__name__} as JSON")


def not_ready(kind: str, what: str, asked: bool, computed_at: datetime | None) -> HttpResponse:
    """What an export of `kind` answers while a worker computes `what` (a board, the judge lab's report) for the data
    as it is now: 503 with Retry-After, saying whether a worker could be asked. A file a researcher keeps
    holds the data as it is, and no request computes for minutes at scale."""
    if asked:
        when = "" if computed_at is None else f" (the last was computed {timesince(computed_at)} ago)"
        text = f"A worker is computing {what} for the data as it is now{when}: retry in a minute."
    else:
        text = f"No worker could be asked for {what} (the broker did not answer): retry to ask again."
    response = HttpResponse(text, status=503, content_type="text/plain")
    response["Retry-After"] = str(RETRY_AFTER_S)
    # A state the client is told to wait out, not a fault: logged as such here, and not again by Django,
    # which logs every 5xx as an ERROR (a monitor paging on them would page on every large export).
    logger.info("%s export not ready (%s): the client is asked to retry", kind, "asked" if asked else "no broker")
    response._has_been_logged = True  # type: ignore[attr-defined]  # django.utils.log.log_response reads it
    return response
