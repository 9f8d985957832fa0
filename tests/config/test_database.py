from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from lab.config import DEFAULT_DB_CONN_MAX_AGE_S, database_settings

PG = "postgres://lab:secret@127.0.0.1:5432/lab"


def test_sqlite_is_left_as_it_was():
    config = database_settings("sqlite:////tmp/lab.sqlite3", conn_max_age="600", pool="true")
    assert config["ENGINE"] == "django.db.backends.sqlite3"
    assert config["NAME"] == "/tmp/lab.sqlite3"
    assert config["OPTIONS"] == {"timeout": 20}
    assert config["CONN_MAX_AGE"] == 0


def test_postgres_pools_by_default():
    config = database_settings(PG, pool_available=True)
    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert config["OPTIONS"]["pool"] is True
    # Django refuses a pool alongside persistent connections.
    assert config["CONN_MAX_AGE"] == 0


def test_pooling_without_psycopg_pool_names_the_extra_to_install():
    with pytest.raises(ImproperlyConfigured, match=r"\[postgres\]"):
        database_settings(PG, pool_available=False)


@pytest.mark.parametrize(
    ("url", "env"), [(f"{PG}?pool=false", None), (PG, "false"), (f"{PG}?pool=false", "true")]
)
def test_without_the_pool_connections_persist_with_health_checks(url, env):
    config = database_settings(url, pool=env, pool_available=False)
    assert "pool" not in config["OPTIONS"]
    assert config["CONN_MAX_AGE"] == DEFAULT_DB_CONN_MAX_AGE_S > 0
    assert config["CONN_HEALTH_CHECKS"] is True


def test_the_url_pool_option_wins_over_the_environment():
    config = database_settings(f"{PG}?pool=true", pool="false", pool_available=True)
    assert config["OPTIONS"]["pool"] is True


def test_conn_max_age_comes_from_the_environment():
    config = database_settings(PG, conn_max_age="0", pool="off")
    assert config["CONN_MAX_AGE"] == 0
    assert database_settings(PG, conn_max_age="300", pool="off")["CONN_MAX_AGE"] == 300


def test_other_url_options_survive():
    config = database_settings(f"{PG}?sslmode=require", pool_available=True)
    assert config["OPTIONS"] == {"sslmode": "require", "pool": True}


@pytest.mark.parametrize(
    ("url", "kwargs", "message"),
    [
        ("bogus://x", {}, "DATABASE_URL is unusable"),
        (PG, {"pool": "sometimes"}, "LAB_DB_POOL must be a boolean"),
        (f"{PG}?pool=maybe", {}, r"\?pool= must be a boolean"),
        (PG, {"pool": "no", "conn_max_age": "a minute"}, "whole number of seconds"),
        (PG, {"pool": "no", "conn_max_age": "-1"}, r"must lie in \[0, 86400\]"),
        (PG, {"conn_max_age": "60"}, "applies only without pooling"),
    ],
)
def test_bad_values_get_a_clear_error(url, kwargs, message):
    with pytest.raises(ImproperlyConfigured, match=message):
        database_settings(url, pool_available=True, **kwargs)
