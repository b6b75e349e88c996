from __future__ import annotations

from tests.debates.conftest import demo  # noqa: F401  (fixture: the demo data)
from tests.jobs.workers import through_the_broker  # noqa: F401  (fixture: tasks go through Redis)
