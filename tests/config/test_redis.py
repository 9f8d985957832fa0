from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured
from redis.asyncio import ConnectionPool

from lab.config import CHANNELS_REDIS_BLOCKING_READ_S, redis_channel_host


def _pool_timeout(host: dict[str, object]) -> float:
    """The socket timeout of a connection built the way channels-redis builds its pool."""
    entry = dict(host)
    pool = ConnectionPool.from_url(str(entry.pop("address")), **entry)
    timeout = pool.connection_class(**pool.connection_kwargs).socket_timeout
    assert timeout is not None
    return float(timeout)


def test_redis_py_alone_would_race_the_blocking_read():
    # Why the lab sets a timeout at all: redis-py's default equals channels-redis's read.
    assert _pool_timeout({"address": "redis://127.0.0.1:6379"}) <= CHANNELS_REDIS_BLOCKING_READ_S


def test_a_plain_url_gets_a_socket_timeout_above_the_blocking_read():
    host = redis_channel_host("redis://127.0.0.1:6379/0")
    assert host["address"] == "redis://127.0.0.1:6379/0"
    assert _pool_timeout(host) > CHANNELS_REDIS_BLOCKING_READ_S


def test_a_socket_timeout_in_the_url_is_honoured():
    host = redis_channel_host("redis://127.0.0.1:6379/0?socket_timeout=45")
    assert host == {"address": "redis://127.0.0.1:6379/0?socket_timeout=45"}
    assert _pool_timeout(host) == 45.0


@pytest.mark.parametrize("timeout", ["5", "2.5"])
def test_a_url_timeout_that_races_the_blocking_read_is_refused(timeout):
    with pytest.raises(ImproperlyConfigured, match="must exceed channels-redis"):
        redis_channel_host(f"redis://127.0.0.1:6379?socket_timeout={timeout}")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://127.0.0.1:6379", "must start with redis://"),
        ("127.0.0.1:6379", "must start with redis://"),
        ("redis://h?socket_timeout=soon", "must be a number of seconds"),
    ],
)
def test_a_bad_url_gets_a_clear_error(url, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        redis_channel_host(url)


def test_tls_and_unix_sockets_are_accepted():
    assert _pool_timeout(redis_channel_host("rediss://h:6380")) > CHANNELS_REDIS_BLOCKING_READ_S
    assert redis_channel_host("unix:///run/redis.sock")["address"] == "unix:///run/redis.sock"
