"""The scaled-out topology for tests: web processes (and speech workers) from the launcher, on a
fresh database of the PostgreSQL and the Redis that DATABASE_URL and REDIS_URL name.

`make test-scaled` (and so .ci/run) provides both; without them these tests are skipped."""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Iterator
from urllib.parse import urlsplit, urlunsplit

import pytest

from lab.cluster.processes import free_port
from lab.cluster.topology import Lab, Shape
from tests.conftest import FAST_CLOCK

DATABASE_URL = os.environ.get("DATABASE_URL", "")
REDIS_URL = os.environ.get("REDIS_URL", "")


def _reachable(url: str) -> bool:
    parts = urlsplit(url)
    try:
        socket.create_connection(
            (parts.hostname or "127.0.0.1", parts.port or 0), timeout=2
        ).close()
    except OSError:
        return False
    return True


SCALED = (
    DATABASE_URL.startswith(("postgres://", "postgresql://"))
    and REDIS_URL.startswith("redis://")
    and _reachable(DATABASE_URL)
    and _reachable(REDIS_URL)
)
needs_scaled = pytest.mark.skipif(
    not SCALED, reason="needs PostgreSQL + Redis (DATABASE_URL, REDIS_URL): make test-scaled"
)


def _autocommit(sql: str) -> None:
    import psycopg

    admin = urlunsplit(urlsplit(DATABASE_URL)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(sql)


@pytest.fixture(scope="module")
def scaled_lab(tmp_path_factory) -> Iterator[Lab]:
    """Two web processes behind nginx and a speech worker, on one fresh database and Redis."""
    name = f"cluster_{secrets.token_hex(4)}"
    _autocommit(f'CREATE DATABASE "{name}"')
    url = urlunsplit(urlsplit(DATABASE_URL)._replace(path=f"/{name}"))
    env = {name_: str(value) for name_, value in FAST_CLOCK.items()}
    env["LAB_RECONNECT_GRACE_S"] = "60"
    lab = Lab(
        tmp_path_factory.mktemp("cluster"),
        Shape(web=2, speech=1, port=free_port()),
        database_url=url,
        redis_url=REDIS_URL,
        extra_env=env,
    )
    try:
        with lab:
            yield lab
    finally:
        _autocommit(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
