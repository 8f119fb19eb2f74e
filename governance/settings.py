"""The one settings module. Every knob comes from the environment (django-environ); the
embedded defaults run the app on a laptop: SQLite, the local tracker and the local wiki."""

from datetime import timedelta
from pathlib import Path

import environ
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
if (BASE_DIR / ".env").is_file():
    environ.Env.read_env(BASE_DIR / ".env")

DEBUG = env.bool("DEBUG", default=True)

_DEV_SECRET_KEY = "dev-only-insecure-key-never-use-in-production"
SECRET_KEY = env.str("SECRET_KEY", default="")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=[])
if not DEBUG:
    missing = [
        name
        for name, value in (("SECRET_KEY", SECRET_KEY), ("ALLOWED_HOSTS", ALLOWED_HOSTS))
        if not value
    ]
    if missing:
        raise ImproperlyConfigured(
            f"DEBUG=false needs {' and '.join(missing)} set in the environment "
            "(for example SECRET_KEY=<50+ random characters> "
            "ALLOWED_HOSTS=governance.example.com). "
            "See README.md, 'Configuration'."
        )
else:
    SECRET_KEY = SECRET_KEY or _DEV_SECRET_KEY
    ALLOWED_HOSTS = ALLOWED_HOSTS or ["127.0.0.1", "localhost", "[::1]", "testserver"]

CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "template_partials",
    "csp",
    "ninja",
    "axes",
    "governance",
    "governance.tracker.local",
    "governance.wiki.local",
    "registers",
    "charter",
    "status",
    "portfolio",
]

MIDDLEWARE = [
    "governance.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "governance.middleware.DomainErrorMiddleware",
    # Last, as django-axes asks: it answers a locked-out sign-in (governance.throttling).
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "governance.urls"
WSGI_APPLICATION = "governance.wsgi.application"
AUTH_USER_MODEL = "governance.User"
AUTHENTICATION_BACKENDS = [
    # First: refuses a sign-in while the account or the address is locked out.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "project-list"
LOGOUT_REDIRECT_URL = "login"

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
                "csp.context_processors.nonce",
                "governance.context_processors.shell",
            ],
            "builtins": ["template_partials.templatetags.partials"],
        },
    }
]

DATABASES = {
    "default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
}
DATABASES["default"]["ATOMIC_REQUESTS"] = False
if DATABASES["default"]["ENGINE"].endswith("postgresql"):
    DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
    # Parallel test runs on one server each name their own test database.
    if env.str("TEST_DATABASE_NAME", default=""):
        DATABASES["default"]["TEST"] = {"NAME": env.str("TEST_DATABASE_NAME")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://governance")}

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-gb"
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if env.bool("STATIC_MANIFEST", default=not DEBUG)
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}
WHITENOISE_USE_FINDERS = DEBUG

# --- Security -----------------------------------------------------------------------------
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=not DEBUG)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=not DEBUG)
if env.bool("BEHIND_TLS_PROXY", default=False):
    # The proxy terminates TLS and says so in X-Forwarded-Proto; only trust it behind one.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

_CSP_IMG_EXTRA = env.list("CSP_IMG_SRC_EXTRA", default=[])
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:", *_CSP_IMG_EXTRA],
        "font-src": [SELF],
        "connect-src": [SELF],
        "form-action": [SELF],
        "frame-ancestors": [NONE],
        "base-uri": [SELF],
        "object-src": [NONE],
    },
}

# --- Governance -----------------------------------------------------------------------------
TRACKER_BACKEND = env.str("TRACKER_BACKEND", default="local")
WIKI_BACKEND = env.str("WIKI_BACKEND", default="local")
# Display names and avatars are resolved from the tracker at render time and cached this long.
PEOPLE_CACHE_SECONDS = env.int("PEOPLE_CACHE_SECONDS", default=300)
# Outbound calls (tracker write-back, wiki) are queued durably in the outbox. With
# OUTBOX_RUN_ON_COMMIT the web process also tries each task right after its transaction
# commits (the laptop default); a worker (`make worker`) retries whatever is left.
OUTBOX_RUN_ON_COMMIT = env.bool("OUTBOX_RUN_ON_COMMIT", default=DEBUG)
OUTBOX_MAX_ATTEMPTS = env.int("OUTBOX_MAX_ATTEMPTS", default=8)
OUTBOX_LEASE_SECONDS = env.int("OUTBOX_LEASE_SECONDS", default=300)
OUTBOX_BACKOFF_SECONDS = env.int("OUTBOX_BACKOFF_SECONDS", default=30)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
}

# Default thresholds of the derived RAG (PRODUCT.md section 3); site admins may override each
# in Portfolio settings. Percentages are cost overrun over the approved budget; days are
# schedule slip past the baselined end plus approved variations.
RAG_THRESHOLDS = {
    "costGreenMaxPct": env.float("RAG_COST_GREEN_MAX_PCT", default=5.0),
    "costAmberMaxPct": env.float("RAG_COST_AMBER_MAX_PCT", default=10.0),
    "scheduleGreenMaxDays": env.int("RAG_SCHEDULE_GREEN_MAX_DAYS", default=0),
    "scheduleAmberMaxDays": env.int("RAG_SCHEDULE_AMBER_MAX_DAYS", default=14),
    "scopeRedAfterDays": env.int("RAG_SCOPE_RED_AFTER_DAYS", default=30),
    "riskAmberMinScore": env.int("RAG_RISK_AMBER_MIN_SCORE", default=8),
    "riskRedMinScore": env.int("RAG_RISK_RED_MIN_SCORE", default=15),
}

# The wiki space and the PMO label applied to pages the service creates from templates.
WIKI_SPACE_KEY = env.str("WIKI_SPACE_KEY", default="GOV")
WIKI_PMO_LABEL = env.str("WIKI_PMO_LABEL", default="pmo")

# --- Throttling of guessed credentials (governance/throttling.py) -------------------------
# Sign-in, the login page and the admin's (django-axes): after SIGNIN_FAILURE_LIMIT failures
# within the lock-out time, the account, and separately the address, are locked out for
# SIGNIN_LOCKOUT_MINUTES; a right password is refused too until then.
AXES_FAILURE_LIMIT = env.int("SIGNIN_FAILURE_LIMIT", default=20)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("SIGNIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = ["username", "ip_address"]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "governance.throttling.signin_locked"
AXES_CLIENT_IP_CALLABLE = "governance.throttling.client_ip"
AXES_VERBOSE = False
# Invalid bearer tokens per address: past the limit within the window, 429 with Retry-After.
API_TOKEN_FAILURE_LIMIT = env.int("API_TOKEN_FAILURE_LIMIT", default=20)
API_TOKEN_FAILURE_WINDOW_SECONDS = env.int("API_TOKEN_FAILURE_WINDOW_SECONDS", default=600)
