from __future__ import annotations

import os
import stat
import subprocess
import sys

import pytest
from django.conf import settings
from django.test import override_settings

from lab.reports.keys import KEY_FILENAME, lab_private_key, lab_public_key
from lab.reports.signing import key_id, public_key_from_pem, public_key_pem, raw_public_key

KEY_ID_SCRIPT = """
import django, os
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
django.setup()
from lab.reports.keys import lab_public_key
from lab.reports.signing import key_id
print(key_id(lab_public_key()))
"""


def test_the_signing_key_is_made_on_first_use_readable_by_its_owner_only(tmp_path):
    state = tmp_path / "state"
    with override_settings(LAB_STATE_DIR=state):
        key = lab_private_key()
        path = state / KEY_FILENAME
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert stat.S_IMODE(state.stat().st_mode) == 0o700
        assert raw_public_key(lab_public_key()) == raw_public_key(key.public_key())
        assert [p.name for p in state.iterdir()] == [KEY_FILENAME]


def test_another_process_signs_with_the_key_already_kept(tmp_path):
    with override_settings(LAB_STATE_DIR=tmp_path):
        here = key_id(lab_public_key())
    there = subprocess.run(
        [sys.executable, "-c", KEY_ID_SCRIPT],
        cwd=settings.BASE_DIR,
        env={**os.environ, "LAB_STATE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        check=True,
    )
    assert there.stdout.strip() == here


@pytest.mark.django_db
def test_the_public_key_is_served_as_pem_at_a_stable_url(client):
    response = client.get("/keys/lab-ed25519.pub")
    assert response.status_code == 200
    served = public_key_from_pem(response.content)
    assert raw_public_key(served) == raw_public_key(lab_public_key())
    assert response.content.decode() == public_key_pem(lab_public_key())


@pytest.mark.django_db
def test_a_report_names_the_served_key_by_its_id(client, guarded):
    served = public_key_from_pem(client.get("/keys/lab-ed25519.pub").content)
    assert guarded.document()["signature"]["key_id"] == key_id(served)
