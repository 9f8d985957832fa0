"""The browser fixtures (lab_server, browser_page) live in tests/conftest.py, shared with
tests/reports; the Chromium settings stay importable from here for the tests/web modules."""

from __future__ import annotations

import pytest

from tests.conftest import CHROMIUM, CHROMIUM_ARGS

__all__ = ["CHROMIUM", "CHROMIUM_ARGS"]


@pytest.fixture(autouse=True)
def no_reconnect_grace(settings):
    """A test's socket that disconnects has left the call; reconnect tests set a grace."""
    settings.LAB_RECONNECT_GRACE_S = 0
