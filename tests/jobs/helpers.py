"""Connecting to the real ASGI application the way a browser does."""

from __future__ import annotations

from channels.db import database_sync_to_async as sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from evalhub.asgi import application


@sync_to_async
def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


async def open_socket(path: str, user=None, origin: str = "http://localhost") -> tuple[WebsocketCommunicator, bool]:
    headers = [(b"origin", origin.encode()), (b"host", b"localhost")]
    if user is not None:
        headers.append((b"cookie", (await session_cookie(user)).encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, _ = await communicator.connect(timeout=5)
    return communicator, connected
