"""Who may not read a debate's turns right now, and why. Other apps register their checks here (the
adjudication app: a person whose blind verdict on the debate is not stored yet), so the debate page
and its socket ask one question without importing them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

WithheldCheck = Callable[[Any, int], str]  # (user, debate id) → why the turns are withheld, or ""
CHECKS: list[WithheldCheck] = []


def on_turns_withheld(check: WithheldCheck) -> None:
    if check not in CHECKS:
        CHECKS.append(check)


def turns_withheld(user: Any, debate_id: int) -> str:
    for check in CHECKS:
        if reason := check(user, debate_id):
            return reason
    return ""
