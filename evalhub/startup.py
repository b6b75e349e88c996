"""What every entry point (manage.py, the web server, a worker) does before anything else."""

from __future__ import annotations


def settings_or_exit() -> None:
    """Load and check the settings before a command, the web server or a worker starts: a setting
    that is missing or malformed ends the process with its one-line message (exit status 1), not
    with a traceback that buries it."""
    import sys

    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    try:
        settings.INSTALLED_APPS  # noqa: B018  (reading a setting loads them all)
    except ImproperlyConfigured as error:
        sys.stderr.write(f"evalhub cannot start: {error}\n")
        raise SystemExit(1) from None


def settle_loaded_objects() -> None:
    """Move everything loaded so far (modules, the URL conf, templates' compiled code) out of the
    garbage collector's sight. Each full collection otherwise walks those ~100,000 objects again:
    on a cold board request that was a 50–200 ms pause at random, most of its p95 (issue 23,
    benchmarks/dashboard_latency.py). Objects made later are collected as usual."""
    import gc

    gc.collect()
    gc.freeze()
