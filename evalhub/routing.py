"""WebSocket routes of every app, gathered in one list."""

from __future__ import annotations

from evalhub.debates.routing import websocket_urlpatterns as debate_routes
from evalhub.jobs.routing import websocket_urlpatterns as job_routes

websocket_urlpatterns = [*job_routes, *debate_routes]
