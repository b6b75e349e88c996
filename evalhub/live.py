"""Pushing HTML fragments to browsers through the channel layer.

Fragments go out only after the transaction that wrote the data commits, so a browser
never shows a row that a rollback took back.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from urllib.parse import parse_qs

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.layers import DEFAULT_CHANNEL_LAYER, channel_layers, get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)
FRAGMENT_EVENT = "html.fragment"


class Outbox:
    """Fragments from sync code (actions) to an event loop that sends them one by one, in order.

    Used while an async runner (a batch of debates) calls actions through sync_to_async: the
    database thread hands fragments over and moves on, instead of waiting for a busy loop.
    """

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self.sender = self.loop.create_task(self._send_all())

    def put(self, group: str, html: str) -> None:
        self.loop.call_soon_threadsafe(self.queue.put_nowait, (group, html))

    async def _send_all(self) -> None:
        while True:
            group, html = await self.queue.get()
            await send_html(group, html)
            self.queue.task_done()

    async def close(self) -> None:
        await asyncio.sleep(0)  # let hand-overs scheduled just before this land in the queue
        await self.queue.join()
        self.sender.cancel()


_outbox: contextvars.ContextVar[Outbox | None] = contextvars.ContextVar("evalhub_outbox", default=None)


@asynccontextmanager
async def outbox() -> AsyncIterator[Outbox]:
    """Within this block, broadcasts from actions (called via sync_to_async) go through one outbox."""
    box = Outbox()
    token = _outbox.set(box)
    try:
        yield box
    finally:
        _outbox.reset(token)
        await box.close()


def watched(group: str) -> bool:
    """False only when the channel layer can tell that no socket is in `group` (both of evalhub's
    layers can; any other counts every group as watched)."""
    has_members = getattr(_layer(), "has_members", None)
    return has_members is None or has_members(group)


def broadcast_html(group: str, html: str | Callable[[], str]) -> None:
    """Send `html` to every socket in `group` once the current transaction commits.

    Given a function, it renders the fragment at the commit (it shows what was stored), and only
    when someone watches then: most debates of a big run, and most pages of a queue, are watched by
    nobody. Deciding at the commit, not at the write, means a socket that joined in between (and
    rendered the page before this transaction's data was visible) still gets the update."""
    box = _outbox.get()

    def send() -> None:
        fragment = html
        if callable(fragment):
            if not watched(group):
                return
            fragment = fragment()
        if box is not None:
            box.put(group, fragment)
            return
        try:
            async_to_sync(_layer().group_send)(group, {"type": FRAGMENT_EVENT, "html": fragment})
        except Exception:  # a dead channel layer must not undo or fail the write it reports
            logger.exception("could not broadcast to %s", group)

    transaction.on_commit(send)


def _layer():
    # get_channel_layer() reads settings on every call; a busy sender looks the built layer up directly.
    return channel_layers.backends.get(DEFAULT_CHANNEL_LAYER) or get_channel_layer()


async def send_html(group: str, html: str) -> None:
    """From async code (a debate's event loop): send now; there is no transaction to wait for. A layer
    that keeps who watched lately (Redis) is asked that first: a group nobody watches gets no frame."""
    layer = _layer()
    try:
        watched_lately = getattr(layer, "watched_lately", None)
        if watched_lately is not None and not await watched_lately(group):
            return
        await layer.group_send(group, {"type": FRAGMENT_EVENT, "html": html})
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
        for fragment in await database_sync_to_async(self.current_fragments)():
            if fragment:
                await self.send(text_data=fragment)

    def group_for_user(self, user) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def current_html(self) -> str:
        """The fragment(s) that bring a freshly connected page up to date; '' for none."""
        return ""

    def current_fragments(self) -> list[str]:
        """current_html, or several messages where one cannot hold them all (a table's rows and a
        block beside the table: htmx parses a message whose first element is a row as table rows)."""
        return [self.current_html()]

    def query(self, name: str) -> str | None:
        """A parameter of the socket's URL (the page it serves, e.g. ?page=2)."""
        values = parse_qs(self.scope.get("query_string", b"").decode("latin-1")).get(name)
        return values[0] if values else None

    async def disconnect(self, code: int) -> None:
        if self.group:
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def dispatch(self, message: dict) -> None:
        # A fragment is relayed as it is, with no database: skip the hop to a thread that channels
        # makes before every handler to close stale connections (once per streamed chunk, per viewer).
        if message["type"] == FRAGMENT_EVENT:
            await self.html_fragment(message)
        else:
            await super().dispatch(message)

    async def html_fragment(self, event: dict) -> None:
        await self.send(text_data=event["html"])
