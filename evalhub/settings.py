"""Django settings for evalhub, all from environment variables (see .env.example).

Two shapes, one code path:
- no DATABASE_URL / REDIS_URL: the embedded mode (SQLite under var/, in-memory channel
  layer, Celery with an in-memory broker and a worker inside the quickstart process);
- DATABASE_URL=postgres://…, REDIS_URL=redis://…: production (PostgreSQL, Celery on Redis,
  channels-redis).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from evalhub.config import ConfigError, Env, check_database_url, check_redis_url, embedded_secret_key
from evalhub.llm.providers.transport import HTTP_CLIENT_VARIABLE, HTTP_CLIENTS

BASE_DIR = Path(__file__).resolve().parent.parent
PLACEHOLDER_SECRET_KEY = "change-me"  # what .env.example ships; refused in production
# 128 MiB takes a million-row judgments CSV (75 MiB; about 800 MiB of memory to import), which the 50 MiB
# before refused unread.
DEFAULT_MAX_IMPORT_BYTES = 128 * 1024 * 1024
# Everything from this server, nothing inline: no page has an inline script or style attribute, and
# htmx is told not to inject its indicator styles (templates/base.html). WebSockets are same-origin.
DEFAULT_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; "
    "connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'none'"
)
env = Env()

try:
    DATA_DIR = Path(env.str("EVALHUB_DATA_DIR") or BASE_DIR / "var")
    DEBUG = env.bool("EVALHUB_DEBUG", False)
    DATABASE_URL = check_database_url(env.str("DATABASE_URL") or f"sqlite:///{DATA_DIR / 'evalhub.sqlite3'}")
    REDIS_URL = check_redis_url(env.str("REDIS_URL")) if env.str("REDIS_URL") else ""
    EMBEDDED = DATABASE_URL.startswith("sqlite") and not REDIS_URL
    SECRET_KEY = env.str("SECRET_KEY")
    if not SECRET_KEY:
        if not EMBEDDED:
            raise ConfigError("SECRET_KEY must be set when DATABASE_URL or REDIS_URL is set (production).")
        SECRET_KEY = embedded_secret_key(DATA_DIR)
    if not EMBEDDED and SECRET_KEY == PLACEHOLDER_SECRET_KEY:
        raise ConfigError(
            f"SECRET_KEY is still {PLACEHOLDER_SECRET_KEY!r} from .env.example; generate one: "
            'python -c "import secrets; print(secrets.token_urlsafe(50))"'
        )
    ALLOWED_HOSTS = env.list("EVALHUB_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
    CSRF_TRUSTED_ORIGINS = env.list("EVALHUB_CSRF_TRUSTED_ORIGINS", [])
    # Bytes, checked before an uploaded or given file is read.
    EVALHUB_MAX_IMPORT_BYTES = env.int("EVALHUB_MAX_IMPORT_BYTES", DEFAULT_MAX_IMPORT_BYTES, minimum=1)
    # Production (a database or Redis server, not DEBUG) is served over HTTPS: secure cookies, a
    # redirect to HTTPS and HSTS by default. Set them false only for a trial over plain HTTP.
    PRODUCTION = not EMBEDDED and not DEBUG
    EVALHUB_SECURE_COOKIES = env.bool("EVALHUB_SECURE_COOKIES", PRODUCTION)
    EVALHUB_SSL_REDIRECT = env.bool("EVALHUB_SSL_REDIRECT", PRODUCTION)
    EVALHUB_HSTS_SECONDS = env.int("EVALHUB_HSTS_SECONDS", 365 * 24 * 3600 if PRODUCTION else 0, minimum=0)
    # Behind a TLS-terminating proxy that sets X-Forwarded-Proto: trust it for "is this HTTPS?".
    EVALHUB_BEHIND_PROXY = env.bool("EVALHUB_BEHIND_PROXY", False)
    # Content-Security-Policy of every response; empty turns it off.
    EVALHUB_CSP = env.str("EVALHUB_CSP", DEFAULT_CSP)
    # Sign-in throttling (django-axes): this many failures lock the account, and the address, for
    # the cool-off; a successful sign-in clears the count, an admin unlocks earlier.
    EVALHUB_LOGIN_FAILURE_LIMIT = env.int("EVALHUB_LOGIN_FAILURE_LIMIT", 5, minimum=1)
    EVALHUB_LOGIN_LOCKOUT_MINUTES = env.int("EVALHUB_LOGIN_LOCKOUT_MINUTES", 15, minimum=1)
    EVALHUB_LOG_LEVEL = env.str("EVALHUB_LOG_LEVEL", "INFO").upper()
    CELERY_WORKER_CONCURRENCY = env.int("EVALHUB_WORKER_CONCURRENCY", 4, minimum=1)
    # Model access: a response cache shared by every worker on this machine, and prices in USD per
    # million tokens, e.g. {"gpt-4o-mini": [0.15, 0.6]}.
    EVALHUB_LLM_CACHE = env.str("EVALHUB_LLM_CACHE") or str(DATA_DIR / "llm-cache.sqlite3")
    # On PostgreSQL the response cache is a table every worker shares, unless a file is named here.
    EVALHUB_LLM_CACHE_FILE_SET = bool(env.str("EVALHUB_LLM_CACHE"))
    EVALHUB_LLM_PRICES = env.json("EVALHUB_LLM_PRICES", {})
    # The HTTP client under the provider SDKs (read again by evalhub.llm, which has no settings).
    EVALHUB_HTTP_CLIENT = env.choice(HTTP_CLIENT_VARIABLE, HTTP_CLIENTS)
    # Adjudication: how long an item stays reserved for one person, and what counts as too fast.
    EVALHUB_RESERVATION_MINUTES = env.int("EVALHUB_RESERVATION_MINUTES", 10, minimum=1)
    EVALHUB_FAST_VERDICT_SECONDS = env.int("EVALHUB_FAST_VERDICT_SECONDS", 5, minimum=0)
    # A chunk whose worker has not beaten for EVALHUB_STALL_SECONDS is sent back to the queue.
    EVALHUB_HEARTBEAT_SECONDS = env.int("EVALHUB_HEARTBEAT_SECONDS", 2, minimum=1)
    EVALHUB_STALL_SECONDS = env.int("EVALHUB_STALL_SECONDS", 20, minimum=2)
    # A chunk sent to the broker and taken by no worker for this long past its queue's current wait (its
    # message was lost: a task that failed before it claimed the chunk) is sent again.
    EVALHUB_UNCLAIMED_SECONDS = env.int("EVALHUB_UNCLAIMED_SECONDS", 45, minimum=10)
    # Connections to Redis per process for the channel layer's sends, and for the cache; work waits for one.
    EVALHUB_REDIS_MAX_CONNECTIONS = env.int("EVALHUB_REDIS_MAX_CONNECTIONS", 20, minimum=2)
    # PostgreSQL connections per process come from one pool of at most this many (0: no pool, one
    # connection per thread); a query that finds none free waits up to the timeout, then fails. A worker
    # grows its own pool to what its threads need (evalhub.db_pool.fit_pool_to_worker).
    EVALHUB_DB_POOL_MAX_SIZE = env.int("EVALHUB_DB_POOL_MAX_SIZE", 10, minimum=0)
    EVALHUB_DB_POOL_TIMEOUT = env.int("EVALHUB_DB_POOL_TIMEOUT", 30, minimum=1)
    # Optional: an OTLP/HTTP logs endpoint; every stored judgment is sent there as an OpenTelemetry
    # gen_ai.evaluation.result event (evalhub.system.telemetry). Empty: off, nothing imported.
    EVALHUB_OTEL_ENDPOINT = env.str("EVALHUB_OTEL_ENDPOINT", "")
    # Calls per minute one API token may make (django-ninja's throttle, counted in the cache).
    EVALHUB_API_CALLS_PER_MINUTE = env.int("EVALHUB_API_CALLS_PER_MINUTE", 600, minimum=1)
    # An API upload larger than this is imported by a worker, as a job to follow (evalhub.api.uploads).
    EVALHUB_API_INLINE_IMPORT_BYTES = env.int("EVALHUB_API_INLINE_IMPORT_BYTES", 8 * 1024 * 1024, minimum=0)
except ConfigError as error:
    raise ImproperlyConfigured(str(error)) from None

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "channels",
    "evalhub.accounts",
    "evalhub.tallies",
    "evalhub.catalog",
    "evalhub.jobs",
    "evalhub.debates",
    "evalhub.adjudication",
    "evalhub.surveys",
    "evalhub.scoring",
    "evalhub.generation",
    "evalhub.worklog",
    "evalhub.dashboards",
    "evalhub.judgelab",
    "evalhub.alignment",
    "evalhub.system",
    "evalhub.home",
    "evalhub.api",
    "ninja",  # its Swagger UI from this server's static files, not a CDN
    "axes",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "evalhub.system.security.ContentSecurityPolicyMiddleware",
    "servestatic.middleware.ServeStaticMiddleware",
    # A read (or a sign-in) whose database connection died under it is answered once more.
    "evalhub.system.lost_connections.RetryLostConnectionMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Every page needs a login unless its view is marked @login_not_required.
    "django.contrib.auth.middleware.LoginRequiredMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, as django-axes asks: it turns a locked-out sign-in into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "evalhub.urls"
ASGI_APPLICATION = "evalhub.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "evalhub.accounts.context_processors.roles",
            ],
        },
    },
]

# Health checks: a pooled connection is checked as it is taken (psycopg_pool's check_connection), so after
# PostgreSQL restarts or drops connections a dead one is replaced instead of failing a request with 500.
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=0, conn_health_checks=True)}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)
    # WAL lets the web server read while the in-process worker writes.
    DATABASES["default"]["OPTIONS"] = {
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=10000;",
        "transaction_mode": "IMMEDIATE",
    }
elif EVALHUB_DB_POOL_MAX_SIZE:
    # psycopg's pool through Django: a thread takes a connection for a request, a task or one call
    # of a runner's database thread and gives it back (evalhub.db_pool), so threads that
    # outnumber the pool wait briefly instead of opening a connection each.
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": EVALHUB_DB_POOL_MAX_SIZE,
        "timeout": EVALHUB_DB_POOL_TIMEOUT,
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",  # refuses a locked-out account or address before any password check
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = EVALHUB_LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = timedelta(minutes=EVALHUB_LOGIN_LOCKOUT_MINUTES)
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]  # either one locks: per account and per address
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
# The address is REMOTE_ADDR, which uvicorn --proxy-headers takes from X-Forwarded-For only when the
# peer is a trusted proxy (--forwarded-allow-ips): a client cannot pick its own address by a header.
AXES_CLIENT_IP_CALLABLE = "evalhub.accounts.throttling.client_address"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

SESSION_COOKIE_SECURE = EVALHUB_SECURE_COOKIES
CSRF_COOKIE_SECURE = EVALHUB_SECURE_COOKIES
SECURE_SSL_REDIRECT = EVALHUB_SSL_REDIRECT
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # the container's health check speaks plain HTTP on loopback
SECURE_HSTS_SECONDS = EVALHUB_HSTS_SECONDS
SECURE_HSTS_INCLUDE_SUBDOMAINS = bool(EVALHUB_HSTS_SECONDS)
# Only a consent marker: a domain joins browsers' preload lists when its owner submits it.
SECURE_HSTS_PRELOAD = bool(EVALHUB_HSTS_SECONDS)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if EVALHUB_BEHIND_PROXY else None
SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env.str("EVALHUB_STATIC_ROOT") or DATA_DIR / "staticfiles")
# Serve straight from the finders when nothing was collected (first look, tests).
SERVESTATIC_USE_FINDERS = True
SERVESTATIC_AUTOREFRESH = DEBUG

# Uploads above this size stream to a temporary file instead of memory.
FILE_UPLOAD_MAX_MEMORY_SIZE = 5 * 1024 * 1024

# --- Channels ---------------------------------------------------------------------
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "evalhub.channel_layers.WatchedRedisChannelLayer",
            # channels-redis waits up to 5 s in each blocking pop (brpop_timeout); redis-py's default
            # socket timeout is also 5 s, so every quiet socket's pop ended in a TimeoutError that
            # dropped the viewer. Reads may take longer than a pop; keepalive finds dead peers instead.
            "CONFIG": {
                "hosts": [
                    {
                        "address": REDIS_URL,
                        "socket_timeout": 30,
                        "socket_keepalive": True,
                        # Sends of the whole process share one pool (evalhub.channel_layers): they wait for one.
                        "max_connections": EVALHUB_REDIS_MAX_CONNECTIONS,
                        "client_name": "evalhub-channels",  # each part's connections are named in CLIENT LIST
                        "health_check_interval": 5,  # as the cache's: a dead pooled connection is replaced
                    }
                ]
            },
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "evalhub.channel_layers.ThreadSafeInMemoryChannelLayer"}}

# --- Cache (dashboards' aggregates) ------------------------------------------------
# Shared by every web process in production; per process in the embedded mode.
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "evalhub.system.redis_cache.FailOpenRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "evalhub",
            # One bounded pool per process: a call waits for a free connection instead of opening more.
            "OPTIONS": {
                "pool_class": "redis.BlockingConnectionPool",
                "max_connections": EVALHUB_REDIS_MAX_CONNECTIONS,
                "timeout": 20,
                "client_name": "evalhub-cache",
                # A pooled connection idle this long is pinged before use: after Redis restarts, a
                # dead one is replaced instead of failing the first call made on it.
                "health_check_interval": 5,
            },
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "evalhub"}}

# --- Celery -----------------------------------------------------------------------
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
CELERY_RESULT_BACKEND = REDIS_URL or "cache+memory://"
CELERY_TASK_DEFAULT_QUEUE = "default"
# A killed worker's task goes back to the queue (results rows are idempotent by key).
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker keeps trying to reach Redis for as long as it is down (Celery's default gives up after
# 100 tries and exits), and compose's restart policy starts one that exits anyway.
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_EXPIRES = 24 * 3600
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 6 * 3600}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": "WARNING"},
    "loggers": {"evalhub": {"handlers": ["console"], "level": EVALHUB_LOG_LEVEL, "propagate": False}},
}
