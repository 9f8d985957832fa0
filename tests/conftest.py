from __future__ import annotations

import pytest


@pytest.fixture
def fast_clock(settings):
    """Compress the conversation clock so scripted runs take a fraction of real time."""
    settings.LAB_TIME_SCALE = 0.04
    return settings
