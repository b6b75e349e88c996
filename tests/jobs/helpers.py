"""Connecting to the real ASGI application the way a browser does."""

from __future__ import annotations

from channels.db import database_sync_to_async as sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connections
from django.test import Client

from evalhub.asgi import application


@sync_to_async
def session_cookie(user) -> str:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}"


async def open_socket(path: str, user=None, origin: str = "http://localhost", with_code: bool = False):
    """The communicator and whether it connected (with the close code too, when with_code)."""
    headers = [(b"origin", origin.encode()), (b"host", b"localhost")]
    if user is not None:
        headers.append((b"cookie", (await session_cookie(user)).encode()))
    communicator = WebsocketCommunicator(application, path, headers=headers)
    connected, code = await communicator.connect(timeout=5)
    if not connected:
        # A refused socket's consumer still waits on its channel (a blocking pop on the Redis layer):
        # end it here, inside the test. Left to the event loop's teardown, its cancellation once
        # hung the whole suite on the Redis layer.
        await communicator.disconnect(timeout=5)
    return communicator, ((connected, code) if with_code else connected)


def stop_once_calls_flow(server, job_id: int, what: str, after: int):
    """A user's Pause or Cancel from another thread, once the fake server has seen `after` calls;
    returns the started thread (join it after the chunk returns)."""
    import threading
    import time

    from evalhub.jobs.actions import do_request_stop
    from evalhub.jobs.models import Job

    def stop() -> None:
        try:
            while server.request_count < after:
                time.sleep(0.01)
            do_request_stop(Job.objects.get(pk=job_id), what)
        finally:
            connections.close_all()  # an ended thread holding a pooled connection keeps it from the pool

    thread = threading.Thread(target=stop)
    thread.start()
    return thread
