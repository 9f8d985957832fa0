"""Pure parsers that turn the scale-out environment (REDIS_URL, DATABASE_URL, the signing key)
into settings values; each raises ImproperlyConfigured with a message naming the variable."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import dj_database_url
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key
from django.core.exceptions import ImproperlyConfigured

# channels-redis blocks 5 s in BZPOPMIN; redis-py's default 5 s socket timeout races it and
# kills the receive loop (django/channels_redis#422), so reads must be allowed to wait longer.
CHANNELS_REDIS_BLOCKING_READ_S = 5.0
REDIS_SOCKET_TIMEOUT_S = 30.0
REDIS_SCHEMES = frozenset({"redis", "rediss", "unix"})
# Kept open between requests, re-checked before reuse: one connect per call costs ~4 ms more.
DEFAULT_DB_CONN_MAX_AGE_S = 60
POSTGRES_ENGINE = "django.db.backends.postgresql"


def redis_channel_host(url: str) -> dict[str, Any]:
    """The channels-redis hosts entry for REDIS_URL, its socket timeout above the blocking read."""
    parts = urlsplit(url)
    if parts.scheme not in REDIS_SCHEMES:
        raise ImproperlyConfigured(
            f"REDIS_URL must start with redis://, rediss:// or unix://, got {url!r}"
        )
    given = parse_qs(parts.query).get("socket_timeout")
    if given is None:
        return {"address": url, "socket_timeout": REDIS_SOCKET_TIMEOUT_S}
    try:
        timeout = float(given[-1])
    except ValueError:
        raise ImproperlyConfigured(
            f"REDIS_URL: socket_timeout must be a number of seconds, got {given[-1]!r}"
        ) from None
    if timeout <= CHANNELS_REDIS_BLOCKING_READ_S:
        raise ImproperlyConfigured(
            f"REDIS_URL: socket_timeout={given[-1]} must exceed channels-redis's "
            f"{CHANNELS_REDIS_BLOCKING_READ_S:g} s blocking read, or every WebSocket is closed "
            "after it; leave it out to get the lab's default "
            f"({REDIS_SOCKET_TIMEOUT_S:g} s)"
        )
    # redis-py lets the URL's own value win over keyword arguments, so pass none.
    return {"address": url}


def parse_bool(name: str, raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(
        f"{name} must be a boolean (1/0, true/false, yes/no, on/off), got {raw!r}"
    )


def _conn_max_age(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_DB_CONN_MAX_AGE_S
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(
            f"LAB_DB_CONN_MAX_AGE must be a whole number of seconds (0 = close after each "
            f"request), got {raw!r}"
        ) from None
    if not 0 <= value <= 86_400:
        raise ImproperlyConfigured(f"LAB_DB_CONN_MAX_AGE must lie in [0, 86400], got {value}")
    return value


def database_settings(
    url: str,
    *,
    conn_max_age: str | None = None,
    pool: str | None = None,
    pool_available: bool = False,
) -> dict[str, Any]:
    """DATABASES["default"] for a DATABASE_URL and the LAB_DB_CONN_MAX_AGE / LAB_DB_POOL values.

    PostgreSQL pools by default (the URL's ?pool= wins over LAB_DB_POOL); SQLite is left as is.
    """
    try:
        config: dict[str, Any] = dict(dj_database_url.parse(url))
    except (ValueError, dj_database_url.UnknownSchemeError) as error:
        raise ImproperlyConfigured(f"DATABASE_URL is unusable: {error}") from None
    options: dict[str, Any] = config.setdefault("OPTIONS", {})
    if config["ENGINE"].endswith("sqlite3"):
        # Many short writes from several tasks: wait for the lock instead of failing.
        options["timeout"] = 20
        return config
    pooled = False
    if config["ENGINE"] == POSTGRES_ENGINE:
        in_url = options.get("pool")
        if isinstance(in_url, bool):
            pooled = in_url
        elif in_url is None:
            pooled = parse_bool("LAB_DB_POOL", pool or "true")
        else:
            pooled = parse_bool("DATABASE_URL's ?pool=", str(in_url))
    if not pooled:
        options.pop("pool", None)
        config["CONN_MAX_AGE"] = _conn_max_age(conn_max_age)
        config["CONN_HEALTH_CHECKS"] = True
        return config
    if not pool_available:
        raise ImproperlyConfigured(
            "PostgreSQL connection pooling needs psycopg_pool: install the lab with "
            "`.venv/bin/pip install -e '.[postgres]'`, or set LAB_DB_POOL=false"
        )
    if conn_max_age not in (None, "0"):
        raise ImproperlyConfigured(
            "LAB_DB_CONN_MAX_AGE applies only without pooling: the pool keeps connections "
            "itself. Unset it, or set LAB_DB_POOL=false"
        )
    # Django refuses a pool with persistent connections; the pool is what keeps them.
    options["pool"] = True
    config["CONN_MAX_AGE"] = 0
    config["CONN_HEALTH_CHECKS"] = False
    return config


def signing_key_from_pem(pem: bytes, source: str) -> Ed25519PrivateKey:
    """An unencrypted Ed25519 private key from PEM, or a clear error naming where it came from."""
    try:
        key = load_pem_private_key(pem, password=None)
    except TypeError:
        raise ImproperlyConfigured(
            f"{source} holds an encrypted key; the lab needs it unencrypted (PKCS#8 PEM)"
        ) from None
    except (ValueError, UnsupportedAlgorithm) as error:
        raise ImproperlyConfigured(
            f"{source} is not a PEM private key ({error}); make one with "
            "`openssl genpkey -algorithm ed25519`"
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        name = type(key).__name__.removeprefix("_")
        raise ImproperlyConfigured(f"{source} holds a {name}, not an Ed25519 key")
    return key


def configured_signing_key(pem: str | None, path: str | None) -> Ed25519PrivateKey | None:
    """The key LAB_SIGNING_KEY (PEM text) or LAB_SIGNING_KEY_FILE (a PEM file) names, if either.

    Reads the file, so call it once, at start-up.
    """
    if pem and path:
        raise ImproperlyConfigured(
            "LAB_SIGNING_KEY and LAB_SIGNING_KEY_FILE are both set: set one, so every replica "
            "knows which key signs"
        )
    if pem:
        # Environment files often carry a PEM on one line with literal \n separators.
        text = pem if "\n" in pem else pem.replace("\\n", "\n")
        return signing_key_from_pem(text.encode(), "LAB_SIGNING_KEY")
    if path:
        try:
            data = Path(path).read_bytes()
        except OSError as error:
            raise ImproperlyConfigured(
                f"LAB_SIGNING_KEY_FILE={path} cannot be read: {error.strerror}"
            ) from None
        return signing_key_from_pem(data, f"LAB_SIGNING_KEY_FILE={path}")
    return None
