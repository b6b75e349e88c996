"""File downloads of the numbers a page shows."""

from __future__ import annotations

import json

from django.http import HttpResponse

from evalhub.core.files.tables import to_text
from evalhub.system.hf_datasets import dataset_zip


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
