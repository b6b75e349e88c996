from __future__ import annotations

from django.urls import path

from evalhub.debates.consumers import DebateConsumer, DebateRunsConsumer

websocket_urlpatterns = [
    path("ws/debates/<int:debate_id>/", DebateConsumer.as_asgi()),
    path("ws/debate-runs/", DebateRunsConsumer.as_asgi()),
    path("ws/debate-runs/<int:run_id>/", DebateRunsConsumer.as_asgi()),
]
