from __future__ import annotations

from tests.dashboards.conftest import arena, empty_cache  # noqa: F401  (fixtures)
