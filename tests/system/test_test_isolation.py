"""What the parallel suite gives each test process of its own."""

from __future__ import annotations

import os

import pytest
from django.conf import settings


def test_each_test_process_has_its_own_response_cache_file():
    """Every test empties the response cache first; a file shared by the processes was emptied under
    another process's test (a GEM test then made a call it had cached, and failed now and then)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        pytest.skip("one test process: nothing is shared")
    assert f"evalhub-test-{worker}-" in settings.EVALHUB_LLM_CACHE
    assert f"evalhub-test-{worker}-" in str(settings.DATA_DIR)
