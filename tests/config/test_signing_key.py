from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from cryptography.hazmat.primitives.asymmetric.ec import SECP256R1, generate_private_key
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    BestAvailableEncryption,
    Encoding,
    NoEncryption,
    PrivateFormat,
)
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from lab.config import configured_signing_key
from lab.reports.keys import lab_private_key
from lab.reports.signing import key_id, raw_public_key

KEY_ID_SCRIPT = """
import django, os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
django.setup()
from lab.reports.keys import lab_public_key
from lab.reports.signing import key_id
print(key_id(lab_public_key()))
"""


def _pem(key: Ed25519PrivateKey | None = None) -> bytes:
    key = key or Ed25519PrivateKey.generate()
    return key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())


def _replica(tmp_path, **env: str) -> subprocess.CompletedProcess[str]:
    """A separate lab process with its own state directory and the given environment."""
    state = tmp_path / f"state-{len(list(tmp_path.iterdir()))}"
    clean = {k: v for k, v in os.environ.items() if not k.startswith("LAB_SIGNING_KEY")}
    return subprocess.run(
        [sys.executable, "-c", KEY_ID_SCRIPT],
        cwd=settings.BASE_DIR,
        env={**clean, "LAB_STATE_DIR": str(state), **env},
        capture_output=True,
        text=True,
    )


def test_replicas_given_the_same_key_file_sign_with_it(tmp_path):
    key = Ed25519PrivateKey.generate()
    path = tmp_path / "signing.pem"
    path.write_bytes(_pem(key))
    path.chmod(0o400)
    ids = {_replica(tmp_path, LAB_SIGNING_KEY_FILE=str(path)).stdout.strip() for _ in range(2)}
    assert ids == {key_id(key.public_key())}


def test_a_key_in_the_environment_is_used_even_on_one_line(tmp_path):
    key = Ed25519PrivateKey.generate()
    one_line = _pem(key).decode().strip().replace("\n", "\\n")
    there = _replica(tmp_path, LAB_SIGNING_KEY=one_line)
    assert there.stdout.strip() == key_id(key.public_key())


def test_a_bad_key_stops_the_lab_at_start_up_with_a_clear_message(tmp_path):
    there = _replica(tmp_path, LAB_SIGNING_KEY="not a key")
    assert there.returncode != 0
    assert "LAB_SIGNING_KEY is not a PEM private key" in there.stderr
    assert not there.stdout


def test_the_configured_key_takes_precedence_over_the_state_dir(tmp_path):
    key = Ed25519PrivateKey.generate()
    with override_settings(LAB_STATE_DIR=tmp_path, LAB_SIGNING_KEY=key):
        assert raw_public_key(lab_private_key().public_key()) == raw_public_key(key.public_key())
    assert list(tmp_path.iterdir()) == []


def test_without_configuration_there_is_no_configured_key():
    assert configured_signing_key(None, None) is None
    assert configured_signing_key("", "") is None


@pytest.mark.parametrize(
    ("pem", "message"),
    [
        (b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n", "not a PEM private"),
        (
            generate_private_key(SECP256R1()).private_bytes(
                Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()
            ),
            "holds a .*PrivateKey, not an Ed25519 key",
        ),
        (
            Ed25519PrivateKey.generate().private_bytes(
                Encoding.PEM, PrivateFormat.PKCS8, BestAvailableEncryption(b"pw")
            ),
            "holds an encrypted key",
        ),
    ],
)
def test_an_unusable_key_file_is_named_in_the_error(tmp_path, pem, message):
    path = tmp_path / "signing.pem"
    path.write_bytes(pem)
    named = re.escape(f"LAB_SIGNING_KEY_FILE={path}")
    with pytest.raises(ImproperlyConfigured, match=f"{named}.*{message}"):
        configured_signing_key(None, str(path))


def test_a_missing_key_file_is_named_in_the_error(tmp_path):
    with pytest.raises(ImproperlyConfigured, match="cannot be read: No such file"):
        configured_signing_key(None, str(tmp_path / "absent.pem"))


def test_both_variables_at_once_are_refused():
    with pytest.raises(ImproperlyConfigured, match="both set"):
        configured_signing_key(_pem().decode(), "/run/secrets/lab.pem")
