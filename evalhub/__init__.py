"""evalhub: evaluate LLMs and the LLMs that judge them."""

from __future__ import annotations

from evalhub.celery import app as celery_app

__all__ = ["celery_app"]
