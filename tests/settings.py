"""Settings for the test suite: the real settings, plus what makes tests fast and isolated.

DATABASE_URL / REDIS_URL from the environment decide whether the suite runs against
PostgreSQL and Redis (CI) or SQLite and in-memory layers (anywhere else).
"""

from __future__ import annotations

import os
import tempfile

os.environ.setdefault("SECRET_KEY", "test-only-secret-key-not-for-production")
os.environ.setdefault("EVALHUB_DATA_DIR", tempfile.mkdtemp(prefix="evalhub-test-"))
# The test client speaks plain HTTP; production's redirect to HTTPS is tested with check --deploy.
os.environ.setdefault("EVALHUB_SSL_REDIRECT", "false")

from evalhub.settings import *  # noqa: E402,F403
from evalhub.settings import DATABASES  # noqa: E402

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
CELERY_TASK_ALWAYS_EAGER = True
# One cache per test process, emptied around each dashboard test: cached aggregates must never
# outlive the rolled-back data they were computed from.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "evalhub-tests"}}
CELERY_TASK_EAGER_PROPAGATES = True

# When the suite runs on PostgreSQL, constraint tests also run on SQLite, through this alias.
if not DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    DATABASES["sqlite"] = {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}
