"""Exports as Hugging Face datasets: a zip of one Parquet file and a dataset card, which
`datasets.load_dataset("parquet", data_files=…)` reads and which can be pushed to a hub as it is.

The card is the README.md a hub shows: a YAML header with the features (name and dtype of every
column, nested lists and records included), a `configs` entry naming the Parquet file, a licence
field to fill in, and where the rows came from.
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

DATA_FILE = "data/train-00000-of-00001.parquet"
ARROW_DTYPES = {"string": "string", "large_string": "string", "int64": "int64", "double": "float64", "bool": "bool"}


def _table(rows: Sequence[dict[str, Any]]) -> Any:
    import pyarrow as pa

    # pyarrow takes the columns from the first row alone: every row gets every column (null where absent).
    columns = list(dict.fromkeys(key for row in rows for key in row))
    rows = [{column: row.get(column) for column in columns} for row in rows]
    try:
        return pa.Table.from_pylist(list(rows))
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        # Values of mixed kinds in one column (a number here, a record there): nested ones as JSON text.
        plain = [
            {k: json.dumps(v, default=str) if isinstance(v, (dict, list)) else v for k, v in row.items()}
            for row in rows
        ]
        return pa.Table.from_pylist(plain)


def _feature(name: str, arrow_type: Any, indent: str) -> list[str]:
    """One column of the card's `features`, in the YAML the hub writes for the same dtype: a list of
    records is `list:` with the record's fields, a record `struct:`, a list of plain values `sequence:`."""
    import pyarrow as pa

    head = f"{indent}- name: {json.dumps(name)}"
    listed = pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type)
    inner = arrow_type.value_type if listed else arrow_type
    if pa.types.is_struct(inner):
        fields = [line for field in inner for line in _feature(field.name, field.type, indent + "  ")]
        return [head, f"{indent}  {'list' if listed else 'struct'}:", *fields]
    dtype = ARROW_DTYPES.get(str(inner), str(inner))
    return [head, f"{indent}  {'sequence' if listed else 'dtype'}: {dtype}"]


def dataset_card(name: str, table: Any, source: str) -> str:
    lines = [
        "---",
        f"pretty_name: {json.dumps(name)}",
        "license: other  # set the licence of your data",
        "dataset_info:",
    ]
    lines.append("  features:")
    for field in table.schema:
        lines += _feature(field.name, field.type, "  ")
    lines += [
        "  splits:",
        "  - name: train",
        f"    num_examples: {table.num_rows}",
        "configs:",
        "- config_name: default",
        "  data_files:",
        "  - split: train",
        f"    path: {DATA_FILE}",
        "tags:",
        "- evalhub",
        "- llm-evaluation",
        "---",
        "",
        f"# {name}",
        "",
        f"{table.num_rows} rows exported from evalhub ({source}) on "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')}, one row per line of the page's CSV export.",
        "",
        "```python",
        "from datasets import load_dataset",
        f'rows = load_dataset("parquet", data_files="{DATA_FILE}")["train"]',
        "```",
        "",
    ]
    return "\n".join(lines)


def dataset_files(rows: Sequence[dict[str, Any]], name: str, source: str) -> dict[str, bytes]:
    """The dataset's files by their path in its repository: the card (README.md) and the Parquet file."""
    import pyarrow.parquet as pq

    table = _table(rows)
    parquet = io.BytesIO()
    pq.write_table(table, parquet)
    return {"README.md": dataset_card(name, table, source).encode(), DATA_FILE: parquet.getvalue()}


def zipped(files: Mapping[str, bytes]) -> bytes:
    """A dataset's files (`dataset_files`) in one zip, each at its path in the repository."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return out.getvalue()


def dataset_zip(rows: Sequence[dict[str, Any]], name: str, source: str) -> bytes:
    """A zip of `data/train-00000-of-00001.parquet` and its card (README.md)."""
    return zipped(dataset_files(rows, name, source))
