from __future__ import annotations

from tests.dashboards.conftest import arena  # noqa: F401  (fixture)
