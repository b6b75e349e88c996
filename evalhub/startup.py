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
