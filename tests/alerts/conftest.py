from __future__ import annotations

import pytest

from lab.alerts.targets import parse_allowed_hosts


@pytest.fixture(autouse=True)
def loopback_receivers(settings):
    """The tests' receivers listen on loopback, which alerts may reach only when it is named."""
    settings.LAB_OUTBOUND_ALLOWED_HOSTS = parse_allowed_hosts("127.0.0.1")
    return settings
