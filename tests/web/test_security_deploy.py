"""Deployment settings: check --deploy is clean when configured for HTTPS, and the built-in secret
key never serves other machines."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings

ROOT = settings.BASE_DIR
REAL_KEY = "k3y-" + "x7Qp2Lr9Vw" * 6
PRODUCTION = {
    "LAB_DEBUG": "0",
    "LAB_SECRET_KEY": REAL_KEY,
    "LAB_ALLOWED_HOSTS": "lab.example",
    "LAB_HTTPS": "1",
}
WARNINGS = ("security.W004", "security.W008", "security.W009", "security.W016")


def _run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LAB_")}
    return subprocess.run(
        [sys.executable, *args],
        cwd=ROOT,
        env={**clean, "DJANGO_SETTINGS_MODULE": "lab.settings", **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def _deploy_check(**env: str) -> str:
    done = _run("manage.py", "check", "--deploy", **env)
    return done.stdout + done.stderr


def test_check_deploy_is_clean_of_the_four_warnings_with_production_settings(tmp_path):
    out = _deploy_check(**PRODUCTION, LAB_STATE_DIR=str(tmp_path))
    assert not [code for code in WARNINGS if code in out], out


def test_check_deploy_names_them_for_the_loopback_defaults(tmp_path):
    out = _deploy_check(LAB_STATE_DIR=str(tmp_path))
    assert all(code in out for code in WARNINGS), out


@pytest.mark.parametrize("hosts", ["*", "lab.example", "127.0.0.1,0.0.0.0"])
def test_the_lab_refuses_to_start_with_the_built_in_key_for_other_hosts(hosts):
    done = _run("-c", "import django; django.setup()", LAB_ALLOWED_HOSTS=hosts)
    assert done.returncode != 0
    assert f"LAB_ALLOWED_HOSTS={hosts} lets other machines reach the lab" in done.stderr
    assert "Set LAB_SECRET_KEY to a long random value" in done.stderr


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"LAB_ALLOWED_HOSTS": "localhost,127.0.0.1"},
        {"LAB_ALLOWED_HOSTS": "*", "LAB_SECRET_KEY": REAL_KEY},
    ],
)
def test_it_starts_on_loopback_with_no_configuration_or_anywhere_with_a_real_key(env):
    done = _run("-c", "import django; django.setup()", **env)
    assert done.returncode == 0, done.stderr


def test_the_container_does_not_open_every_host_with_the_built_in_key():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "LAB_ALLOWED_HOSTS=*" not in dockerfile
    assert "LAB_SECRET_KEY=" not in dockerfile


def test_a_trusted_key_file_that_is_not_a_key_stops_the_lab_at_start_up(tmp_path):
    bad = tmp_path / "bad.pub"
    bad.write_text("not a key")
    done = _run("-c", "import django; django.setup()", LAB_TRUSTED_KEYS=str(bad))
    assert done.returncode != 0
    assert f"LAB_TRUSTED_KEYS: {bad} is unusable: not a PEM public key" in done.stderr
