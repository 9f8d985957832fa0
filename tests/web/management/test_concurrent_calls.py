"""What runscenarios --calls prints under its per-call verdicts."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from lab.web.management.concurrent_calls import CallsMeasured


def test_the_summary_gives_p50_p95_failed_connections_and_the_labs_own_capacity() -> None:
    summary = CallsMeasured(
        latencies_ms=[900, 1000, 1100, 1200, 5000],
        failed_connections=1,
        frames_sent=1000,
        frames_late=20,
        encode_ms=30.0,
        decode_ms=20.0,
    ).lines(4)
    assert "p50=1100 ms p95=5000 ms over 5 replies" in summary[0]
    assert summary[1].startswith("failed connections: 1/4;")
    assert summary[2].startswith("lab capacity: 2.0% of 1000 caller frames sent late")
    assert "0.050 ms per 20 ms frame" in summary[2] and "load average" in summary[2]


def test_no_reply_heard_is_said_so() -> None:
    summary = CallsMeasured([], 4, 0, 0, 0.0, 0.0).lines(4)
    assert "no reply heard" in summary[0] and summary[1].startswith("failed connections: 4/4")


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--calls", "0"], "--calls must lie in"),
        (["--calls", "2", "--trials", "2"], "no --trials or --free"),
        (["--sandbox-port", "70000"], "--sandbox-port must be a TCP port"),
    ],
)
def test_bad_call_options_are_refused_before_any_run(args: list[str], words: str) -> None:
    with pytest.raises(CommandError, match=words):
        call_command("runscenarios", "--agent", "twilio:ws://127.0.0.1:9/media", *args)
