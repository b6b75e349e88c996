"""A request whose database connection died under it is answered, not refused with 500 (issue 78).

PostgreSQL may drop a connection mid-request (a restart, a failover, an administrator's
pg_terminate_backend, a proxy's idle cut). The pool checks a connection as it hands it out, but one
cut while a request holds it fails that request's next query. Such a request is run once more on a
fresh connection where that is safe: a read (GET, HEAD, OPTIONS), and the sign-in, which writes only
once the password is checked and writes the same again. Every other write is left failed (its
transaction rolled back): running a form's write twice is not for a middleware to decide.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from django.core.signals import got_request_exception
from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections
from django.urls import reverse

logger = logging.getLogger(__name__)

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
LOST = "_evalhub_lost_connection"


def _note_lost_connection(sender: Any, request: Any = None, **kwargs: Any) -> None:
    """Remember on the request that it failed on a database connection that is gone."""
    error = sys.exc_info()[1]
    if request is not None and isinstance(error, (OperationalError, InterfaceError)):
        connection = connections[DEFAULT_DB_ALIAS]
        if connection.connection is None or not connection.is_usable():
            setattr(request, LOST, True)


got_request_exception.connect(_note_lost_connection, dispatch_uid="evalhub-lost-connections")


def retry_is_safe(request: Any) -> bool:
    return request.method in SAFE_METHODS or (request.method == "POST" and request.path == reverse("login"))


class RetryLostConnectionMiddleware:
    """Outermost of the middleware that touch the database: what it retries is the whole rest."""

    def __init__(self, get_response: Any) -> None:
        self.get_response = get_response

    def __call__(self, request: Any) -> Any:
        response = self.get_response(request)
        if not getattr(request, LOST, False) or not retry_is_safe(request):
            return response
        connection = connections[DEFAULT_DB_ALIAS]
        if connection.in_atomic_block:  # a test's or a caller's transaction: nothing to retry on
            return response
        logger.warning("%s %s: its database connection was lost; answering it once more", request.method, request.path)
        delattr(request, LOST)
        connection.close()  # the next query takes a fresh connection (a pooled one is checked first)
        return self.get_response(request)
