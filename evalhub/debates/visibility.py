"""What a person may not read yet, and why: one rule that every door asks (issue 78).

Other apps register the debates they hold back from a person (the adjudication app: the debate of an
item the person holds on a blind-first screen before their blind verdict is stored). The debate page,
its socket, the adjudication exports, the review page, the agreement page and the admin all ask here,
so a person with a second role (viewer, admin) reads nothing a door left open."""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import Any

WithheldSource = Callable[[Any], Collection[int]]  # user → the debate ids withheld from them now
SOURCES: list[WithheldSource] = []
WITHHELD_REASON = "You hold this debate on the adjudication screen: it opens after your blind verdict there."


def on_withheld(source: WithheldSource) -> None:
    if source not in SOURCES:
        SOURCES.append(source)


def withheld_debates(user: Any) -> frozenset[int]:
    """The debates whose turns, verdicts, aids and people's verdicts this person may not read now."""
    if not getattr(user, "is_authenticated", False):
        return frozenset()
    return frozenset(debate for source in SOURCES for debate in source(user))


def withheld_from(request: Any) -> frozenset[int]:
    """`withheld_debates` of the request's user, read once a request (the admin asks for every object
    and permission it checks)."""
    if not hasattr(request, "_evalhub_withheld"):
        request._evalhub_withheld = withheld_debates(request.user)
    return request._evalhub_withheld


def turns_withheld(user: Any, debate_id: int) -> str:
    """Why this debate is held back from this person, or ""."""
    return WITHHELD_REASON if debate_id in withheld_debates(user) else ""
