"""Form helpers shared by the apps' views."""

from __future__ import annotations


def form_reasons(form) -> str:
    """A bound, invalid form's errors in one line: `field: reason; field: reason`."""
    return "; ".join(f"{field}: {' '.join(errors)}" for field, errors in form.errors.items())
