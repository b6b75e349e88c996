"""A judge report as stored bytes and back: MessagePack through msgspec, decoded into the report's own
types (so reading a snapshot runs no code from it, unlike a pickle), under a schema version computed
from those types (a report stored before a field was added or changed is not read: it is computed again).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import msgspec
import numpy as np

from evalhub.core.judge_lab.report_types import Report
from evalhub.core.statistics.corrected_ratings import CorrectedBoard

# A report's corrected boards by an estimator, kept apart from it: judge id → board, or why there is none.
Boards = dict[str, CorrectedBoard | str | None]


def schema_version(root: type = Report) -> str:
    """A digest of the JSON schema of `root` (the report): it changes whenever a type in it does."""
    schema = json.dumps(msgspec.json.schema(root), sort_keys=True)
    return hashlib.sha256(schema.encode()).hexdigest()[:16]


SCHEMA_VERSION = schema_version()
BOARDS_SCHEMA_VERSION = schema_version(Boards)


class Snapshot(msgspec.Struct, frozen=True):
    schema: str
    report: msgspec.Raw


class _Envelope(msgspec.Struct, frozen=True):
    schema: str
    report: Report


def _plain(value: Any) -> Any:
    """numpy's scalars and arrays, which the measures leave in the report, as the Python values they hold."""
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise NotImplementedError(f"a judge report holds a {type(value).__name__}, which a snapshot cannot store")


def encode_report(report: Report) -> bytes:
    return msgspec.msgpack.encode(_Envelope(SCHEMA_VERSION, report), enc_hook=_plain)


def decode_report(payload: bytes) -> Report | None:
    """The stored report, or None when it was stored under another schema version or cannot be read as one."""
    try:
        snapshot = msgspec.msgpack.decode(payload, type=Snapshot)
        if snapshot.schema != SCHEMA_VERSION:
            return None
        return msgspec.msgpack.decode(snapshot.report, type=Report)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


class _BoardsEnvelope(msgspec.Struct, frozen=True):
    schema: str
    boards: Boards


def encode_boards(boards: Boards) -> bytes:
    return msgspec.msgpack.encode(_BoardsEnvelope(BOARDS_SCHEMA_VERSION, boards), enc_hook=_plain)


def decode_boards(payload: bytes) -> Boards | None:
    """The stored boards, or None when stored under another schema version or not boards."""
    try:
        envelope = msgspec.msgpack.decode(payload, type=_BoardsEnvelope)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return envelope.boards if envelope.schema == BOARDS_SCHEMA_VERSION else None
