"""Headless runs: the scripted caller plays each scenario through the browser's WebSocket path."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from lab.asgi import application
from lab.evaluation.evaluator import evaluate
from lab.evaluation.verdicts import Verdict
from lab.events import store
from lab.events.models import Run
from lab.events.types import Channel, Mode
from lab.reports.export import report_bytes
from lab.reports.services import report_for_run
from lab.runs.services import run_start
from lab.scenarios.catalog import UnknownScenario, all_contracts, contract_get
from lab.web.management.database import require_migrated

RUN_TIMEOUT_S = 600


async def play_headless(run: Run) -> None:
    """Connect like a browser, press "play", and wait for the final verdict fragment."""
    communicator = WebsocketCommunicator(
        application, f"/ws/runs/{run.id}/", headers=[(b"origin", b"http://127.0.0.1")]
    )
    connected, _ = await communicator.connect()
    if not connected:
        raise CommandError(f"the run {run.id} refused the connection")
    try:
        await communicator.send_to(text_data=json.dumps({"action": "play"}))
        async with asyncio.timeout(RUN_TIMEOUT_S):
            while True:
                message = await communicator.receive_output(timeout=RUN_TIMEOUT_S)
                if message["type"] == "websocket.close":
                    break
                if 'data-final="true"' in message.get("text", ""):
                    break
    finally:
        await communicator.disconnect()


class Command(BaseCommand):
    help = "Play each scenario's scripted caller headless and print one verdict line per scenario."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scenario", action="append", dest="scenarios", metavar="ID")
        parser.add_argument("--unguarded", action="store_true", help="take the policy gate out")
        parser.add_argument(
            "--channel", choices=[c.value for c in Channel], default=Channel.TYPED.value
        )
        parser.add_argument(
            "--out", type=Path, help="write each run's signed evidence report to DIR/ID.json"
        )
        parser.add_argument(
            "--time-scale",
            type=float,
            help="compress the conversation clock (1.0 = real time); typed channel only",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        require_migrated()
        try:
            contracts = [contract_get(s) for s in options["scenarios"] or sorted(all_contracts())]
        except UnknownScenario as error:
            raise CommandError(str(error)) from None
        if options["time_scale"] is not None:
            if not 0.001 <= options["time_scale"] <= 10:
                raise CommandError("--time-scale must lie in [0.001, 10]")
            settings.LAB_TIME_SCALE = options["time_scale"]
        out: Path | None = options["out"]
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)
        mode = Mode.UNGUARDED if options["unguarded"] else Mode.GUARDED
        channel = Channel(options["channel"])
        verdicts = []
        for contract in contracts:
            run = run_start(scenario_id=contract.id, mode=mode, channel=channel)
            asyncio.run(play_headless(run))
            evaluation = evaluate(contract, store.run_events(run))
            verdicts.append(evaluation.verdict)
            self.stdout.write(f"{contract.id} {evaluation.verdict.value}")
            if out is not None:
                (out / f"{contract.id}.json").write_bytes(report_bytes(report_for_run(run)))
        if any(verdict is not Verdict.PASS for verdict in verdicts):
            raise SystemExit(1)
