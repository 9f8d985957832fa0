"""What the phone-width check opens, written into the lab server's own database: a finished
voice run with its sealed recording, owned by the member, and three trials of the tenant's agent.

Run as `python -m tests.web.member_pages USERNAME REPORT` beside the server (its DATABASE_URL
and LAB_STATE_DIR); prints the voice run's id and the trials page's path as JSON.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
from datetime import timedelta
from pathlib import Path

import django


def seed(username: str, report_path: Path) -> dict[str, str]:
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.utils import timezone

    from lab.accounts.models import Agent, Tenant
    from lab.evaluation.evaluator import EVALUATOR_VERSION
    from lab.events import store
    from lab.events.chain import EventChain
    from lab.events.recording_events import AgentSpanRef, CallerPieceRef, RecordingClosed
    from lab.events.types import AgentUtterance, Channel, Mode, RunEnded, RunStarted
    from lab.policy.gate import GATE_VERSION
    from lab.reports.export import report_bytes
    from lab.reports.services import report_for_run
    from lab.runs.ownership import owner_user_set
    from lab.runs.recording_files import recording_path
    from lab.runs.services import run_start
    from lab.scenarios.catalog import contract_get
    from lab.scripted.dialogue import AGENT_VERSION
    from tests.web.test_recording_browser import stereo_wav

    user = get_user_model().objects.get(username=username)
    run = run_start(scenario_id="correction", mode=Mode.GUARDED, channel=Channel.VOICE)
    owner_user_set(run=run, user_id=user.pk)
    contract = contract_get("correction")
    wav = stereo_wav(3)
    payloads = [
        RunStarted(
            run_id=str(run.id),
            scenario_id=contract.id,
            scenario_version=contract.version,
            contract_hash=contract.contract_hash,
            mode=Mode.GUARDED,
            channel=Channel.VOICE,
            evaluator_version=EVALUATOR_VERSION,
            gate_version=GATE_VERSION,
            agent_version=AGENT_VERSION,
        ),
        AgentUtterance(text="Hello, how can I help?", purpose="greeting", duration_ms=1000),
        RecordingClosed(
            digest=hashlib.sha256(wav).hexdigest(),
            bytes=len(wav),
            duration_ms=3000,
            channels=2,
            sample_rate=16000,
            truncated=False,
            caller_pieces=[CallerPieceRef(stream_ms=0, at_ms=0)],
            agent_spans=[
                AgentSpanRef(utterance_event_id="ev-00002", start_ms=0, end_ms=0, played_ms=None)
            ],
        ),
        RunEnded(reason_kind="completed", reason="the caller hung up"),
    ]
    log, now = EventChain(), timezone.now()
    for index, payload in enumerate(payloads):
        store.event_append(run=run, event=log.append(payload, at=now + timedelta(seconds=index)))
    store.run_mark_ended(run=run)
    recording_path(str(run.id)).parent.mkdir(parents=True, exist_ok=True)
    recording_path(str(run.id)).write_bytes(wav)
    report_path.write_bytes(report_bytes(report_for_run(run)))

    # demo as `make run` seeds it, with the reference agent the README registers beside its own.
    demo = Tenant.objects.get(slug="demo")
    Tenant.objects.filter(pk=demo.pk).update(name="Demo (the lab's own agent)")
    Agent.objects.get_or_create(tenant=demo, slug="demo-agent")
    reference = {"connector": "openai", "endpoint": "http://127.0.0.1:8001/v1"}
    Agent.objects.get_or_create(
        tenant=demo, slug="reference", defaults={**reference, "model": "scripted-reference"}
    )
    printed = io.StringIO()
    trials = ("--trials", "3", "--scenario", "correction", "--time-scale", "0.1")
    # A failed trial (a busy machine) still makes the page this check needs.
    with contextlib.suppress(SystemExit):
        call_command(
            "runscenarios",
            "--tenant",
            "demo",
            "--agent-slug",
            "demo-agent",
            *trials,
            stdout=printed,
        )
    path = printed.getvalue().strip().splitlines()[-1].removeprefix("trials page: ")
    return {"voice_run": str(run.id), "trials": path}


if __name__ == "__main__":
    django.setup()
    print(json.dumps(seed(sys.argv[1], Path(sys.argv[2]))))
