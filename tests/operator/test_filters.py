"""The queue's filters: read once from a query string, refused with the name of what is wrong."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.conf import settings

from lab.operator.filters import BadFilter, QueueFilter, parse_filter
from lab.operator.states import CaseState


def test_empty_values_mean_any_and_values_are_typed():
    assert parse_filter({"severity": [""], "agent": ["  "]}) == QueueFilter()
    wanted = parse_filter({"state": ["escalated"], "before": ["42"], "agent": ["demo-agent"]})
    assert (wanted.state, wanted.before, wanted.agent) == (CaseState.ESCALATED, 42, "demo-agent")
    assert wanted.query(before=7) == {"agent": "demo-agent", "state": "escalated", "before": "7"}


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"severity": ["loud"]}, "severity 'loud' is not one of info, warn, critical"),
        ({"before": ["-3"]}, "before '-3' is not a record id"),
        ({"page": ["2"]}, "unknown filter 'page'; the queue filters by severity, category"),
        ({"agent": ["a", "b"]}, "agent is given 2 times"),
    ],
)
def test_bad_values_are_named(query, message):
    with pytest.raises(BadFilter, match=message):
        parse_filter(query)


def test_a_new_card_matches_the_first_page_of_a_filter_that_admits_it():
    card = {"severity": "critical", "category": "price", "agent": "demo-agent", "state": "open"}
    assert QueueFilter().matches(**card)
    assert parse_filter({"severity": ["critical"], "state": ["open"]}).matches(**card)
    assert not parse_filter({"category": ["hours"]}).matches(**card)
    assert not parse_filter({"before": ["9"]}).matches(**card)  # an older page


def test_the_state_machine_and_the_filters_import_nothing_from_django():
    script = "import sys, lab.operator.states, lab.operator.filters; print('django' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == "False"
