"""The one settings module. Every knob comes from the environment (django-environ); the
embedded defaults run the app on a laptop: SQLite, the local tracker and the local wiki."""

import re
from datetime import timedelta
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as installed_version
from pathlib import Path

import django_stubs_ext
import environ
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured

from config.layers import APPS

# Generic admin and queryset classes (ModelAdmin[Model]) subscriptable at run time, as the
# type checker reads them.
django_stubs_ext.monkeypatch()

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
            "See docs/reference.md, 'Settings'."
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
    *APPS[1:],  # the project's apps in layer order (config.layers), after the kernel's own
    "config",  # the site above the apps (its seed_demo command)
    # --- MCP OAuth (governance/oauth.py): the app as the authorization server of /mcp ---
    "oauth2_provider",
]

MIDDLEWARE = [
    "governance.middleware.RequestIdMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # Compresses what the views answer (BREACH: docs/decisions/0045).
    "governance.middleware.CompressionMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "governance.atlassian.context.AtlassianActingMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "governance.middleware.DomainErrorMiddleware",
    # Last, as django-axes asks: it answers a locked-out sign-in (governance.throttling).
    "axes.middleware.AxesMiddleware",
]

# gzip level of pages and API answers (governance.middleware.CompressionMiddleware).
GZIP_LEVEL = env.int("GZIP_LEVEL", default=1)
if not 1 <= GZIP_LEVEL <= 9:
    raise ImproperlyConfigured(f"GZIP_LEVEL must be 1 to 9, not {GZIP_LEVEL}.")

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
AUTH_USER_MODEL = "governance.User"
AUTHENTICATION_BACKENDS = [
    # First: refuses a sign-in while the account or the address is locked out.
    "axes.backends.AxesStandaloneBackend",
    # Django's ModelBackend, the user row read from the shared cache (dropped on save).
    "governance.auth_backends.CachedModelBackend",
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
    # No JIT compilation of statements (PostgreSQL compiles any it estimates costly, on every
    # run): the statement listing every viewable project spent 1.0 of its 1.1 s at 10,000
    # projects compiling (record 0303). Sent as a startup option, after PGOPTIONS and the
    # URL's own `options` (which an explicit `options` would otherwise drop); one of those that
    # sets jit wins. POSTGRES_JIT_OFF=false sends nothing: behind a pooler that refuses startup
    # options (PgBouncer's default), set it on the database (ALTER DATABASE ... SET jit = off).
    if env.bool("POSTGRES_JIT_OFF", default=True):
        _options = DATABASES["default"].setdefault("OPTIONS", {})
        _given = " ".join(
            part for part in (env.str("PGOPTIONS", default=""), _options.get("options", "")) if part
        )
        if not re.search(r"(?:-c\s*|--)jit\s*=", _given):
            _given = f"{_given} -c jit=off".strip()
        _options["options"] = _given
    # Parallel test runs on one server each name their own test database.
    if env.str("TEST_DATABASE_NAME", default=""):
        DATABASES["default"]["TEST"] = {"NAME": env.str("TEST_DATABASE_NAME")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

CACHES = {"default": env.cache("CACHE_URL", default="locmemcache://governance")}
if CACHES["default"]["BACKEND"] == "django.core.cache.backends.redis.RedisCache":
    # Redis fails soft (governance.cache): a miss, never an error, while it cannot be reached;
    # a short timeout so a silent Redis costs a request at most this long once a second.
    CACHES["default"]["BACKEND"] = "governance.cache.SoftRedisCache"
    _cache_timeout = env.float("CACHE_TIMEOUT_SECONDS", default=0.5)
    CACHES["default"].setdefault("OPTIONS", {})
    CACHES["default"]["OPTIONS"].setdefault("socket_connect_timeout", _cache_timeout)
    CACHES["default"]["OPTIONS"].setdefault("socket_timeout", _cache_timeout)


def _installed_version() -> str:
    try:
        return installed_version("governance")
    except PackageNotFoundError:
        return "dev"


# What is deployed: DEPLOY_VERSION (a release tag or commit, set by the deploy), else the
# installed package's version. Every cache key carries it (Django's cache VERSION), so pages and
# pictures cached by other code are never read; the stored project health carries it in its
# basis, so rows derived by other rules are derived again.
DEPLOY_VERSION = env.str("DEPLOY_VERSION", default="") or _installed_version()
CACHES["default"]["VERSION"] = DEPLOY_VERSION

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
# Looked up as each request comes in while DEBUG is on (WhiteNoise's own default), fixed here
# because the test runner turns DEBUG off after this module is read: otherwise every test
# client walked every static finder on its first request, about 0.1 s a client.
WHITENOISE_AUTOREFRESH = DEBUG

# --- Security -----------------------------------------------------------------------------
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# Sessions read from the shared cache, written through to the database (the truth).
SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
SESSION_CACHE_ALIAS = "default"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SAMESITE = "Lax"
CSRF_COOKIE_SAMESITE = "Lax"
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=not DEBUG)
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=not DEBUG)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=not DEBUG)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=0 if DEBUG else 31_536_000)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=not DEBUG)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=not DEBUG)
BEHIND_TLS_PROXY = env.bool("BEHIND_TLS_PROXY", default=False)
# Behind the proxy: how many proxies in front of the app append to X-Forwarded-For (the
# client's address is that many entries from the right; governance.throttling.client_ip).
TRUSTED_PROXY_HOPS = env.int("TRUSTED_PROXY_HOPS", default=1)
if BEHIND_TLS_PROXY:
    # The proxy terminates TLS and says so in X-Forwarded-Proto; only trust it behind one.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]

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
TRACKER_BACKEND: str = env.str("TRACKER_BACKEND", default="local")
WIKI_BACKEND: str = env.str("WIKI_BACKEND", default="local")
# Imported files: the order of day and month in dates written as a spreadsheet writes them
# (01/04/2027): DMY (day first) or MDY (month first). Empty: such dates are refused, naming
# the form expected (YYYY-MM-DD). governance/spreadsheet_values.py.
IMPORT_DATE_ORDER = env.str("IMPORT_DATE_ORDER", default="").upper()
if IMPORT_DATE_ORDER not in ("", "DMY", "MDY"):
    raise ImproperlyConfigured("IMPORT_DATE_ORDER must be DMY, MDY or empty.")
# Display names and avatars are resolved from the tracker at render time and cached this long.
PEOPLE_CACHE_SECONDS = env.int("PEOPLE_CACHE_SECONDS", default=300)
# Outbound calls (tracker write-back, wiki) are queued durably in the outbox. With
# OUTBOX_RUN_ON_COMMIT the web process also tries each task right after its transaction
# commits (the laptop default); a worker (`make worker`) retries whatever is left.
OUTBOX_RUN_ON_COMMIT = env.bool("OUTBOX_RUN_ON_COMMIT", default=DEBUG)

# Notification e-mail: one file per message under mail/ by default (the demo sends dozens; the
# console stays readable); EMAIL_URL picks SMTP, e.g.
# smtp+tls://user:password@mail.example.com:587, or consolemail://. SITE_URL makes the links in
# e-mails absolute (`make run` sets it from the port it serves when it is unset).
_EMAIL = env.email_url("EMAIL_URL", default="filemail://")
EMAIL_BACKEND = _EMAIL["EMAIL_BACKEND"]
EMAIL_HOST = _EMAIL.get("EMAIL_HOST", "localhost") or "localhost"
EMAIL_PORT = _EMAIL.get("EMAIL_PORT") or 25
EMAIL_HOST_USER = _EMAIL.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = _EMAIL.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = bool(_EMAIL.get("EMAIL_USE_TLS", False))
EMAIL_USE_SSL = bool(_EMAIL.get("EMAIL_USE_SSL", False))
if _EMAIL["EMAIL_BACKEND"].endswith("filebased.EmailBackend"):
    # filemail:// writes under mail/ here; filemail:///var/mail/app (django-environ drops the
    # leading slash) under that absolute folder.
    _path = _EMAIL.get("EMAIL_FILE_PATH") or ""
    EMAIL_FILE_PATH = f"/{_path}" if _path else str(BASE_DIR / "mail")
DEFAULT_FROM_EMAIL = env("DEFAULT_FROM_EMAIL", default="governance@localhost")
SITE_URL: str = env("SITE_URL", default="http://127.0.0.1:8000")
OUTBOX_MAX_ATTEMPTS = env.int("OUTBOX_MAX_ATTEMPTS", default=8)
OUTBOX_LEASE_SECONDS = env.int("OUTBOX_LEASE_SECONDS", default=300)
OUTBOX_BACKOFF_SECONDS = env.int("OUTBOX_BACKOFF_SECONDS", default=30)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    # WeasyPrint reports each layout step and every CSS rule it skips (thousands of lines a
    # PDF, costing time and burying the log): only its errors are kept.
    "loggers": {
        "weasyprint": {"level": "ERROR"},
        "weasyprint.progress": {"level": "ERROR"},
        "fontTools": {"level": "WARNING"},
    },
}

# Default thresholds of the derived RAG (docs/product.md section 3); site admins may override each
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
WIKI_SPACE_KEY: str = env.str("WIKI_SPACE_KEY", default="GOV")
WIKI_PMO_LABEL = env.str("WIKI_PMO_LABEL", default="pmo")

# --- Assistant ------------------------------------------------------------------------------
# The language model behind the Assistant page (empty: the page offers the actions as forms).
# "openai:<model>" (any OpenAI-compatible server with AGENT_BASE_URL, e.g. a local Ollama at
# http://127.0.0.1:11434/v1 or vLLM) or "anthropic:<model>", with its key in AGENT_API_KEY.
AGENT_MODEL = env.str("AGENT_MODEL", default="")
AGENT_API_KEY = env.str("AGENT_API_KEY", default="")
AGENT_BASE_URL = env.str("AGENT_BASE_URL", default="")
AGENT_TIMEOUT_SECONDS = env.float("AGENT_TIMEOUT_SECONDS", default=60.0)
# Questions to the model per person per hour.
AGENT_RATE_LIMIT_PER_HOUR = env.int("AGENT_RATE_LIMIT_PER_HOUR", default=30)
# A write the assistant proposes must be confirmed within this many minutes.
AGENT_PROPOSAL_MINUTES = env.int("AGENT_PROPOSAL_MINUTES", default=15)
# --- Atlassian (TRACKER_BACKEND=jira, WIKI_BACKEND=confluence) ----------------------------------
# The site people and the app work in, the OAuth 2.0 (3LO) app from developer.atlassian.com,
# the key tokens are encrypted with (comma-separated Fernet keys: the first encrypts, all
# decrypt, so a new key goes first and the old one stays until `atlassian_rotate_key` has run),
# and the service account the worker and the lookups on others' behalf use.
ATLASSIAN_SITE_URL: str = env.str("ATLASSIAN_SITE_URL", default="").rstrip("/")
ATLASSIAN_CLIENT_ID: str = env.str("ATLASSIAN_CLIENT_ID", default="")
ATLASSIAN_CLIENT_SECRET: str = env.str("ATLASSIAN_CLIENT_SECRET", default="")
# The Jira webhook's token must carry a qsh claim binding it to the request (Atlassian's query
# string hash). Atlassian does not list the claims of an OAuth 2.0 app's webhook token: should
# a site's deliveries come without one, false accepts a token without qsh (one that carries
# a qsh is still checked against the request). docs/atlassian.md, Webhooks.
ATLASSIAN_WEBHOOK_REQUIRE_QSH: bool = env.bool("ATLASSIAN_WEBHOOK_REQUIRE_QSH", default=True)
ATLASSIAN_TOKEN_KEY: str = env.str("ATLASSIAN_TOKEN_KEY", default="")
ATLASSIAN_SERVICE_EMAIL: str = env.str("ATLASSIAN_SERVICE_EMAIL", default="")
ATLASSIAN_SERVICE_API_TOKEN: str = env.str("ATLASSIAN_SERVICE_API_TOKEN", default="")
# The service token's kind (governance/atlassian/service.py): `classic` calls the site URL,
# `scoped` (a token with scopes, the only kind service accounts have) the gateway
# {ATLASSIAN_API_URL}/ex/{jira,confluence}/{cloudId}. The cloud id: ATLASSIAN_CLOUD_ID, else
# the site's /_edge/tenant_info. Its expiry (YYYY-MM-DD), which Atlassian does not tell the
# token: atlassian_check warns 30 days before.
ATLASSIAN_SERVICE_TOKEN_KIND: str = env.str("ATLASSIAN_SERVICE_TOKEN_KIND", default="classic")
ATLASSIAN_CLOUD_ID: str = env.str("ATLASSIAN_CLOUD_ID", default="")
ATLASSIAN_SERVICE_TOKEN_EXPIRES: str = env.str("ATLASSIAN_SERVICE_TOKEN_EXPIRES", default="")
# Endpoint bases, overridable so tests and offline checks point them at local mocks.
ATLASSIAN_AUTH_URL: str = env.str(
    "ATLASSIAN_AUTH_URL", default="https://auth.atlassian.com"
).rstrip("/")
ATLASSIAN_API_URL: str = env.str("ATLASSIAN_API_URL", default="https://api.atlassian.com").rstrip(
    "/"
)
# Empty: people's calls go through {ATLASSIAN_API_URL}/ex/jira/{cloudId}, the service
# account's to ATLASSIAN_SITE_URL. Set, every Jira call goes there (a mock).
ATLASSIAN_JIRA_URL: str = env.str("ATLASSIAN_JIRA_URL", default="").rstrip("/")
# Confluence: v2 under {base}/wiki/api/v2 and v1 under {base}/wiki/rest/api of the site.
ATLASSIAN_CONFLUENCE_URL: str = env.str("ATLASSIAN_CONFLUENCE_URL", default="").rstrip("/")
ATLASSIAN_CONFLUENCE_V2_URL: str = env.str("ATLASSIAN_CONFLUENCE_V2_URL", default="").rstrip("/")
ATLASSIAN_CONNECT_TIMEOUT: float = env.float("ATLASSIAN_CONNECT_TIMEOUT", default=3.05)
ATLASSIAN_READ_TIMEOUT: float = env.float("ATLASSIAN_READ_TIMEOUT", default=15.0)
ATLASSIAN_RETRIES: int = env.int("ATLASSIAN_RETRIES", default=3)
ATLASSIAN_MAX_RETRY_WAIT: float = env.float("ATLASSIAN_MAX_RETRY_WAIT", default=10.0)
ATLASSIAN_MAX_PAGES: int = env.int("ATLASSIAN_MAX_PAGES", default=50)
# Browse permissions per (person, project) and project lists are cached this long.
TRACKER_CACHE_SECONDS: int = env.int("TRACKER_CACHE_SECONDS", default=60)
# Jira groups whose members count as site administrators when asked about someone else.
ATLASSIAN_ADMIN_GROUPS: list[str] = env.list("ATLASSIAN_ADMIN_GROUPS", default=["site-admins"])
ATLASSIAN_FIELD_NAME: str = env.str("ATLASSIAN_FIELD_NAME", default="Work Package")
# Jira dynamic webhooks (governance.webhooks): where Jira sends them (empty:
# {SITE_URL}/hooks/jira/), and whose OAuth grant holds them (empty: the site admin who last
# signed in granting manage:jira-webhook).
ATLASSIAN_WEBHOOK_URL: str = env.str("ATLASSIAN_WEBHOOK_URL", default="")
ATLASSIAN_WEBHOOK_ACCOUNT_ID: str = env.str("ATLASSIAN_WEBHOOK_ACCOUNT_ID", default="")
# --- Throttling of guessed credentials (governance/throttling.py) -------------------------
# Sign-in, the login page and the admin's (django-axes, governance.throttling.SigninHandler):
# after SIGNIN_FAILURE_LIMIT failures of one account from one address, that account is
# locked out from that address (and only there); after SIGNIN_ADDRESS_FAILURE_LIMIT failures
# from one address, every account is locked out from it; each for SIGNIN_LOCKOUT_MINUTES
# after the failures that reached the limit. A right password is refused too until then.
AXES_FAILURE_LIMIT = env.int("SIGNIN_FAILURE_LIMIT", default=20)
SIGNIN_ADDRESS_FAILURE_LIMIT = env.int("SIGNIN_ADDRESS_FAILURE_LIMIT", default=100)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("SIGNIN_LOCKOUT_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"], "ip_address"]
AXES_HANDLER = "governance.throttling.SigninHandler"
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "governance.throttling.signin_locked"
AXES_CLIENT_IP_CALLABLE = "governance.throttling.client_ip"
AXES_VERBOSE = False
# Invalid bearer tokens (the API and /mcp) per address: past the limit within the window, an
# invalid token answers 429 with Retry-After; a valid one always passes.
API_TOKEN_FAILURE_LIMIT = env.int("API_TOKEN_FAILURE_LIMIT", default=20)
API_TOKEN_FAILURE_WINDOW_SECONDS = env.int("API_TOKEN_FAILURE_WINDOW_SECONDS", default=600)

# --- MCP OAuth (governance/oauth.py) ---------------------------------------------------------
# The app is the OAuth 2.1 authorization server of its MCP endpoint (django-oauth-toolkit):
# authorization code with PKCE S256 only, public clients registered dynamically (RFC 7591) or
# named by a client ID metadata document, tokens bound to {site}/mcp (RFC 8707) and accepted
# nowhere else, refresh tokens rotated. MCP_OAUTH_REDIRECT_SCHEMES: the schemes a client's
# redirect URI may use besides https and http on a loopback address (desktop apps' own).
MCP_OAUTH_REDIRECT_SCHEMES = env.list("MCP_OAUTH_REDIRECT_SCHEMES", default=["vscode", "cursor"])
# Dynamic Client Registration is open to anyone, so it is counted per client address:
# MCP_OAUTH_REGISTRATION_LIMIT registrations within MCP_OAUTH_REGISTRATION_WINDOW_SECONDS,
# then 429 until the window ends. A registration no code or token ever used is removed
# MCP_OAUTH_UNUSED_REGISTRATION_HOURS after it was made (the hourly `oauth_registrations`
# job of `manage.py runperiodic`).
MCP_OAUTH_REGISTRATION_LIMIT = env.int("MCP_OAUTH_REGISTRATION_LIMIT", default=20)
MCP_OAUTH_REGISTRATION_WINDOW_SECONDS = env.int(
    "MCP_OAUTH_REGISTRATION_WINDOW_SECONDS", default=3600
)
MCP_OAUTH_UNUSED_REGISTRATION_HOURS = env.int("MCP_OAUTH_UNUSED_REGISTRATION_HOURS", default=24)
# The origins (scheme://host[:port]) the authorization endpoint sends an error back to
# without showing a page first (RFC 9700 section 4.11.2), besides a loopback address (the
# person's own machine). Anyone may register any https redirect URI, so none is trusted by
# default: an error before consent shows the app's error page.
MCP_OAUTH_TRUSTED_REDIRECT_ORIGINS = env.list("MCP_OAUTH_TRUSTED_REDIRECT_ORIGINS", default=[])
OAUTH2_PROVIDER = {
    "OAUTH2_VALIDATOR_CLASS": "governance.oauth.McpValidator",
    "OAUTH2_BACKEND_CLASS": "governance.oauth.AbsoluteUriCore",
    "SCOPES": {"mcp": "Use the assistant's tools as you, through an MCP client"},
    "DEFAULT_SCOPES": ["mcp"],
    "PKCE_REQUIRED": True,
    "COMPLIANT_BCP_RFC9700_PKCE_METHOD": True,  # S256 only
    "COMPLIANT_BCP_RFC9700_IMPLICIT_GRANT": True,
    "COMPLIANT_BCP_RFC9700_PASSWORD_GRANT": True,
    "COMPLIANT_BCP_RFC9700_AUTHZ_RESPONSE_ISS": True,
    "COMPLIANT_BCP_RFC9700_ACCESS_TOKEN_TRANSPORT": True,
    "COMPLIANT_BCP_RFC9700_TOKEN_STORAGE": True,
    "ROTATE_REFRESH_TOKEN": True,
    "REFRESH_TOKEN_REUSE_PROTECTION": True,
    "ACCESS_TOKEN_EXPIRE_SECONDS": env.int("MCP_OAUTH_ACCESS_TOKEN_SECONDS", default=3600),
    "REFRESH_TOKEN_EXPIRE_SECONDS": env.int("MCP_OAUTH_REFRESH_TOKEN_SECONDS", default=30 * 86400),
    "AUTHORIZATION_CODE_EXPIRE_SECONDS": 60,
    "REQUEST_APPROVAL_PROMPT": "force",
    "ALLOWED_REDIRECT_URI_SCHEMES": ["https", "http", *MCP_OAUTH_REDIRECT_SCHEMES],
    "ALLOW_LOCALHOST_LOOPBACK": True,
    "OAUTH2_RESPONSE_TYPES_SUPPORTED": ["code"],
    "OAUTH2_GRANT_TYPES_SUPPORTED": ["authorization_code", "refresh_token"],
    "OAUTH2_TOKEN_ENDPOINT_AUTH_METHODS_SUPPORTED": ["none"],
    "DCR_ENABLED": True,
    "DCR_REGISTRATION_PERMISSION_CLASSES": ("oauth2_provider.dcr.AllowAllDCRPermission",),
    "CIMD_ENABLED": True,
    "CIMD_FETCH_TIMEOUT_SECONDS": 5,
    "CIMD_MAX_DOCUMENT_SIZE": 16 * 1024,
    "OAUTH2_PROTECTED_RESOURCE_NAME": "Project governance (MCP)",
    "OAUTH2_PROTECTED_RESOURCE_BEARER_METHODS_SUPPORTED": ["header"],
}
# W008 warns that http redirect URIs are allowed: they are, on a loopback address only (a
# desktop client's own listener, RFC 8252), which governance.oauth.McpValidator enforces at
# every authorization and registration refuses otherwise.
SILENCED_SYSTEM_CHECKS = ["oauth2_provider.W008"]
