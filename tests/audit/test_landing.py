from __future__ import annotations

from lab.audit.landing import subscribers


def test_the_queue_and_the_outbox_subscribe_to_new_flags_cases_first():
    # The alert's console link names the case, so the case must be opened first.
    assert subscribers() == ["operator.open_cases", "alerts.enqueue_alerts"]
