"""Django core settings: apps, middleware, database, auth, static files, DRF, logging."""

import os
from pathlib import Path

import dj_database_url

from .env import parse_bool, parse_list

BASE_DIR = Path(__file__).resolve().parent.parent.parent

DEBUG = parse_bool("DEBUG", os.environ.get("DEBUG"), default=False)
# SECRET_KEY is in security.py: with DEBUG off an unset, short, predictable or published key stops startup.
ALLOWED_HOSTS = parse_list(os.environ.get("ALLOWED_HOSTS"), "127.0.0.1,localhost")

REDIS_URL = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/0")

INSTALLED_APPS = [
    # daphne first: its runserver replaces Django's, so `manage.py runserver` serves websockets too.
    # It and the admin through configs that start nothing at Django's start (gangsched/app_configs.py).
    "gangsched.app_configs.DaphneConfig",
    "gangsched.app_configs.AdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_filters",
    "channels",
    "scheduler_core",
    "dashboard",
]

MIDDLEWARE = [
    # First, so it stores the gang reads the API marks with every other middleware's headers.
    "dashboard.api.cached_reads.StoreMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "gangsched.urls"
WSGI_APPLICATION = "gangsched.wsgi.application"
ASGI_APPLICATION = "gangsched.asgi.application"

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
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/gangsched"),
        engine="django.db.backends.postgresql",  # psycopg 3 is the installed driver
        # 0: a connection per request. daphne runs each request's sync code in a thread of its
        # own, and a kept-open connection stays behind with its thread: under load (bench/load.py)
        # the web process held 97 of PostgreSQL's 100 and requests failed. Django's docs say the
        # same: no persistent connections under ASGI. Workers may set more (seconds).
        conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "0")),
        conn_health_checks=True,
    )
}
# DATABASE_POOL_MAX_SIZE=N: a psycopg connection pool of at most N connections per process
# instead of a connection per request (what Django's docs advise under ASGI): connections are
# reused and a burst of requests waits for one instead of exhausting PostgreSQL's limit.
if os.environ.get("DATABASE_POOL_MAX_SIZE"):
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps the connections
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": 1,
        "max_size": int(os.environ["DATABASE_POOL_MAX_SIZE"]),
        "timeout": 30,
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = LOGIN_URL

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    # Compressed but not manifest-hashed: a template's {% static %} works before collectstatic
    # has run (tests, a fresh checkout), at the price of no cache-busting file names.
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Serve straight from the app and project static dirs too, so `make run` works even when
# collectstatic has not been run since a static file changed.
WHITENOISE_USE_FINDERS = True

REST_FRAMEWORK = {
    # Token first: its WWW-Authenticate header is what makes DRF answer anonymous requests 401, not 403.
    # DRF's TokenAuthentication with the lookup cached per process (dashboard/api/authentication.py).
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "dashboard.api.authentication.CachedTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # DRF's three, with the JSON parser that refuses a key given twice (dashboard/api/parsers.py).
    "DEFAULT_PARSER_CLASSES": [
        "dashboard.api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_FILTER_BACKENDS": ["dashboard.api.filters.FilterBackend"],  # django-filter's
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "dashboard.api.exceptions.api_exception_handler",
}
# The API's limits (dashboard/api/): submissions per user (DRF rate syntax, counted in the cache
# below) and the largest minMember / member count of a gang, the same for manifests.
GANGSCHED_SUBMIT_RATE = os.environ.get("GANGSCHED_SUBMIT_RATE", "60/min")
GANGSCHED_MAX_MIN_MEMBER = int(os.environ.get("GANGSCHED_MAX_MIN_MEMBER", "10000"))
GANGSCHED_MAX_GANG_MEMBERS = GANGSCHED_MAX_MIN_MEMBER  # the name scheduler_core/declarations reads
# How long a web process may answer from its memory that an API token is valid and whose it is
# (0: ask the database every request). A deleted token or a saved user is forgotten at once in
# the process that changed it, in the others within this many seconds.
GANGSCHED_TOKEN_CACHE_SECONDS = float(os.environ.get("GANGSCHED_TOKEN_CACHE_SECONDS", "10"))

# The API's read cache (dashboard/api/read_cache.py): gang lists and details kept per web process
# until a committed change to them is notified by PostgreSQL. 0 turns it off.
GANGSCHED_API_CACHE = parse_bool("GANGSCHED_API_CACHE", os.environ.get("GANGSCHED_API_CACHE"), default=True)
# Seconds a cached gang read may be answered behind the scheduler's own progress while it is
# recomputed (dashboard/api/read_cache.py); 0: never.
GANGSCHED_API_CACHE_MAX_STALE_SECONDS = float(os.environ.get("GANGSCHED_API_CACHE_MAX_STALE_SECONDS", "1"))
# A web process freezes what survives a full garbage collection and thaws it this often, so
# cyclic garbage among it is collected (gangsched/gc_policy.py); 0 turns the freezing off.
GANGSCHED_GC_THAW_SECONDS = float(os.environ.get("GANGSCHED_GC_THAW_SECONDS", "600"))

# Shared by every web process, so a throttle counts one user's requests across all of them.
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": REDIS_URL,
        "KEY_PREFIX": "gangsched",
    }
}
SPECTACULAR_SETTINGS = {
    "TITLE": "gangsched API",
    "DESCRIPTION": "Submit, inspect and operate gangs on a Kubernetes (or simulated) cluster.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The schema, Swagger UI and Redoc are for signed-in users (a session or a token), as a
    # Kubernetes API server serves its OpenAPI: an anonymous request for the schema gets the
    # API's 401, as every endpoint but the token's; the viewers send to the sign-in page
    # (dashboard/api/docs.py).
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # Swagger UI and Redoc assets come from drf-spectacular-sidecar: no CDN needed.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No spec validator badge: Swagger UI would send the schema to validator.swagger.io.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
}

# LOG_FORMAT=json: one JSON object a line with the calls' extra fields (gang, by), for log
# shippers (gangsched/logformat.py); the default stays human-readable.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"},
        "json": {"()": "gangsched.logformat.JsonFormatter"},
    },
    # A dry run's writes log nothing that did not happen (scheduler_core/db/dry_run.py).
    "filters": {"dry_run": {"()": "scheduler_core.db.dry_run.DryRunLogFilter"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "filters": ["dry_run"],
            "formatter": "json" if os.environ.get("LOG_FORMAT", "").strip().lower() == "json" else "plain",
        }
    },
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {},
}
# GANGSCHED_LOG_TASKS=1: every Celery task in the log, as Celery logs them by default: the
# worker's "received" and "succeeded" lines, beat's "Sending due task" line, and the worker's
# idle cycles. Off, the worker logs a line per cycle that changed something (and warnings and
# errors): beat sends about six tasks a second, and their lines scrolled `make run`'s own away.
GANGSCHED_LOG_TASKS = parse_bool("GANGSCHED_LOG_TASKS", os.environ.get("GANGSCHED_LOG_TASKS"), default=False)
for _logger in ("celery.app.trace", "celery.worker.strategy", "celery.worker.request", "celery.beat"):
    LOGGING["loggers"][_logger] = {"level": "INFO" if GANGSCHED_LOG_TASKS else "WARNING"}
if GANGSCHED_LOG_TASKS:  # the idle cycles' DEBUG lines (scheduler_core/tasks.py)
    LOGGING["loggers"]["scheduler_core.tasks"] = {"level": "DEBUG"}
