from __future__ import annotations

from tests.dashboards.conftest import arena  # noqa: F401  (fixture)
from tests.jobs.test_a_new_kind import responses, sent, word_count  # noqa: F401  (fixtures: a kind of long work)
