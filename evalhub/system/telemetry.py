"""Optional: every stored judgment sent as an OpenTelemetry evaluation event, so Langfuse, Phoenix or
any OTLP backend shows evalhub's judgments beside the traces of the calls they judge.

Off unless EVALHUB_OTEL_ENDPOINT names an OTLP/HTTP logs endpoint (e.g.
http://collector:4318/v1/logs); off, nothing is built and OpenTelemetry is never imported. On, the
events of a write are sent after its transaction commits (a rolled-back write sends none), through
the SDK's batch processor, so a slow collector never holds a worker. Its packages (opentelemetry-sdk and
opentelemetry-exporter-otlp-proto-http) are in requirements.txt.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.db import transaction

from evalhub.core.files.evaluation_events import EVENT_NAME, EvaluationResult, event_attributes

logger = logging.getLogger(__name__)
_lock = threading.Lock()
_provider: Any = None  # the process's LoggerProvider, made on first use
_override: Any = None  # a provider a test (or an embedding program) supplies


def enabled() -> bool:
    return _override is not None or bool(settings.EVALHUB_OTEL_ENDPOINT)


def emit_after_commit(results: Callable[[], Iterable[EvaluationResult]]) -> None:
    """Send the events `results()` describes once the current transaction commits; does nothing (and
    calls nothing) when events are off."""
    if enabled():
        transaction.on_commit(lambda: _emit(results()))


def _emit(results: Iterable[EvaluationResult]) -> None:
    try:
        otel_logger = _provider_now().get_logger("evalhub.evaluations")
        for result in results:
            otel_logger.emit(event_name=EVENT_NAME, attributes=event_attributes(result))
    except Exception:  # telemetry must never fail the write it reports
        logger.exception("could not send evaluation events")


def _provider_now() -> Any:
    global _provider
    if _override is not None:
        return _override
    with _lock:
        if _provider is None:
            _provider = _otlp_provider(settings.EVALHUB_OTEL_ENDPOINT)
        return _provider


def _otlp_provider(endpoint: str) -> Any:
    try:
        from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
        from opentelemetry.sdk._logs import LoggerProvider
        from opentelemetry.sdk._logs.export import BatchLogRecordProcessor
        from opentelemetry.sdk.resources import Resource
    except ImportError as error:
        raise RuntimeError(
            "EVALHUB_OTEL_ENDPOINT is set, but OpenTelemetry is not installed: pip install -r requirements.txt"
        ) from error
    provider = LoggerProvider(resource=Resource.create({"service.name": "evalhub"}))
    provider.add_log_record_processor(BatchLogRecordProcessor(OTLPLogExporter(endpoint=endpoint)))
    return provider


@contextmanager
def using_provider(provider: Any) -> Iterator[None]:
    """Send events to `provider` (an SDK LoggerProvider, e.g. with an in-memory exporter) within the block."""
    global _override
    previous, _override = _override, provider
    try:
        yield
    finally:
        _override = previous
