"""Pushing HTML fragments to browsers through the channel layer.

Fragments go out only after the transaction that wrote the data commits, so a browser
never shows a row that a rollback took back.
"""

from __future__ import annotations

import logging

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)
FRAGMENT_EVENT = "html.fragment"


def broadcast_html(group: str, html: str) -> None:
    """Send `html` to every socket in `group` once the current transaction commits."""

    def send() -> None:
        layer = get_channel_layer()
        try:
            async_to_sync(layer.group_send)(group, {"type": FRAGMENT_EVENT, "html": html})
        except Exception:  # a dead channel layer must not undo or fail the write it reports
            logger.exception("could not broadcast to %s", group)

    transaction.on_commit(send)


async def send_html(group: str, html: str) -> None:
    """From async code (a debate's event loop): send now; there is no transaction to wait for."""
    try:
        await get_channel_layer().group_send(group, {"type": FRAGMENT_EVENT, "html": html})
    except Exception:  # a dead channel layer must not stop the work it reports on
        logger.exception("could not send to %s", group)


class FragmentConsumer(AsyncWebsocketConsumer):
    """A socket that joins one group and relays its HTML fragments.

    Subclasses implement `group_for_user(user)`: the group name, or None to refuse
    (anonymous users, outsiders, unknown objects — all refused alike, leaking nothing).
    """

    group: str | None = None

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        self.group = await database_sync_to_async(self.group_for_user)(user)
        if self.group is None:
            await self.close(code=4403)
            return
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        # Whatever changed between the page render (or a dropped socket) and now.
        current = await database_sync_to_async(self.current_html)()
        if current:
            await self.send(text_data=current)

    def group_for_user(self, user) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def current_html(self) -> str:
        """The fragment(s) that bring a freshly connected page up to date; '' for none."""
        return ""

    async def disconnect(self, code: int) -> None:
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def html_fragment(self, event: dict) -> None:
        await self.send(text_data=event["html"])
