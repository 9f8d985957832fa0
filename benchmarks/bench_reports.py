"""Times report export and full verification for runs of 100, 10,000 and 100,000 events.

Run: .venv/bin/python -m benchmarks.bench_reports
The logs repeat a realistic voice turn pattern (bench_evaluator.long_run), chained with EventChain.
The 100,000-event report is larger than the 10 MB import limit, so it is verified with the limit
lifted; everything else is the import path itself.
"""

from __future__ import annotations

import functools
import gc
import os
import platform
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeVar

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

import lab
from benchmarks.bench_evaluator import long_run
from lab.evaluation.verdicts import Verdict
from lab.events.chain import EventChain
from lab.events.types import Channel, Event, RunStarted
from lab.reports.canonical import body_digest
from lab.reports.export import report_assemble, report_bytes
from lab.reports.schema import Runtime, SpeechModel, VadSettings
from lab.reports.structure import Parsed, report_parse
from lab.reports.verification import check_integrity, verify_report
from lab.scenarios.catalog import all_contracts, contract_get
from lab.scenarios.contracts import Contract

SIZES = (100, 10_000, 100_000)
ROUNDS = 3
RUN_ID = "bench-run"
T = TypeVar("T")


def _chained(contract: Contract, target: int) -> list[Event]:
    """long_run's events, rechained so that run.started names the real contract."""
    chain = EventChain()
    for event in long_run(target):
        payload = event.payload
        if isinstance(payload, RunStarted):
            payload = payload.model_copy(
                update={
                    "run_id": RUN_ID,
                    "contract_hash": contract.contract_hash,
                    "channel": Channel.VOICE,
                }
            )
        chain.append(payload, at=event.at)
    return chain.events


def _runtime(started: RunStarted) -> Runtime:
    return Runtime(
        lab_version=lab.__version__,
        git_commit="benchmark",
        python=f"{platform.python_implementation()} {platform.python_version()}",
        os=platform.platform(),
        asr=SpeechModel(name="tiny.en", files_sha256="0" * 64),
        tts=SpeechModel(name="en_US-joe-medium", files_sha256="0" * 64),
        vad=VadSettings(aggressiveness=2, end_silence_ms=500),
        gate_version=started.gate_version,
        agent_version=started.agent_version,
        evaluator_version=started.evaluator_version,
        channel=started.channel,
        mode=started.mode,
    )


def _best(run: Callable[[], T]) -> tuple[float, T]:
    """The best of ROUNDS wall-clock timings, with the first result."""
    started = time.perf_counter()
    result = run()
    timings = [time.perf_counter() - started]
    for _ in range(ROUNDS - 1):
        started = time.perf_counter()
        run()
        timings.append(time.perf_counter() - started)
    return min(timings), result


def main() -> None:
    load = ", ".join(f"{figure:.2f}" for figure in os.getloadavg())
    print(
        f"machine: {platform.platform()}, {platform.python_implementation()} "
        f"{platform.python_version()}, {os.cpu_count()} CPUs, load average {load}"
    )
    print(f"best of {ROUNDS} rounds; verify = all five checks, from the raw bytes\n")
    header = (
        f"{'events':>8} {'report':>9} {'export':>9} {'verify':>9} "
        f"{'(parse':>9} {'chain+digest':>12} {'rest)':>8} {'verify ev/s':>12}  result"
    )
    print(header)
    print("-" * len(header))
    contract, contracts = contract_get("correction"), all_contracts()
    key = Ed25519PrivateKey.generate()
    for size in SIZES:
        events = _chained(contract, size)
        started = events[0].payload
        assert isinstance(started, RunStarted)
        runtime = _runtime(started)

        def export(events: list[Event] = events, runtime: Runtime = runtime) -> bytes:
            report = report_assemble(
                run_id=RUN_ID,
                generated_at=datetime.now(UTC),
                runtime=runtime,
                contract=contract,
                events=events,
                key=key,
            )
            return report_bytes(report)

        export_s, raw = _best(export)
        verify_s, verification = _best(
            functools.partial(
                verify_report, raw, contracts=contracts, lab_key=key.public_key(), max_bytes=None
            )
        )
        # The stages as verify_report runs them: with the cyclic collector paused.
        gc.disable()
        parse_s, parsed = _best(functools.partial(report_parse, raw, max_bytes=None))
        assert isinstance(parsed, Parsed)

        def chain(parsed: Parsed = parsed) -> object:
            return check_integrity(parsed, body_digest(parsed.document))

        chain_s, _ = _best(chain)
        gc.enable()
        result = (
            f"{'consistent' if verification.consistent else 'INCONSISTENT'}, "
            f"{verification.verdict}, signature {verification.origin}"
        )
        print(
            f"{len(events):>8,} {len(raw) / 1e6:>7.2f}MB {export_s:>8.3f}s {verify_s:>8.3f}s "
            f"{parse_s:>8.3f}s {chain_s:>11.3f}s {verify_s - parse_s - chain_s:>7.3f}s "
            f"{len(events) / verify_s:>12,.0f}  {result}"
        )
        if not verification.consistent or verification.verdict is not Verdict.PASS:
            raise SystemExit(f"the benchmark report should verify: {verification.problems()}")


if __name__ == "__main__":
    main()
