"""The browser fixtures (lab_server, browser_page) live in tests/conftest.py, shared with
tests/reports; the Chromium settings stay importable from here for the tests/web modules."""

from __future__ import annotations

from tests.conftest import CHROMIUM, CHROMIUM_ARGS

__all__ = ["CHROMIUM", "CHROMIUM_ARGS"]
