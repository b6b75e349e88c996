"""WebSocket routes of every app, gathered in one list, and a close for any other path."""

from __future__ import annotations

from channels.generic.websocket import AsyncWebsocketConsumer
from django.urls import re_path

from evalhub.debates.routing import websocket_urlpatterns as debate_routes
from evalhub.jobs.routing import websocket_urlpatterns as job_routes

UNKNOWN_PATH = 4404  # application close codes are 4000–4999; 4404 reads as "not found"


class UnknownPathConsumer(AsyncWebsocketConsumer):
    """Refuses a socket no app routes, instead of URLRouter's ValueError (an HTTP 500 with a traceback)."""

    async def connect(self) -> None:
        await self.close(code=UNKNOWN_PATH)


websocket_urlpatterns = [*job_routes, *debate_routes, re_path(r"", UnknownPathConsumer.as_asgi())]
