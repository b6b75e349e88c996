from __future__ import annotations

from tests.dashboards.conftest import arena  # noqa: F401  (fixture)
from tests.debates.conftest import demo, make_run  # noqa: F401  (fixtures: the demo data and a debate run on it)
from tests.jobs.test_a_new_kind import responses, sent, word_count  # noqa: F401  (fixtures: a kind of long work)
