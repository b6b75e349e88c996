"""ASGI entry point: HTTP goes to Django, WebSockets to Channels consumers.

WebSockets need a logged-in session (AuthMiddlewareStack) and an Origin among
ALLOWED_HOSTS (AllowedHostsOriginValidator); consumers check roles themselves.
"""

from __future__ import annotations

import os

# A web process does its numerical work (a board's fit, a page's statistics) on one BLAS thread: several
# processes and the workers share the cores, and each library's own pool of a thread per core made a
# page's fit take several times its CPU while workers ran. Set before numpy loads; a value given wins.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

from django.core.asgi import get_asgi_application  # noqa: E402

from evalhub.startup import settings_or_exit, settle_loaded_objects  # noqa: E402

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "evalhub.settings")
settings_or_exit()
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402  (needs the app registry)
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from channels.security.websocket import AllowedHostsOriginValidator  # noqa: E402

from evalhub.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": AllowedHostsOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
settle_loaded_objects()
