"""Times GateState.decide() on commit requests against a state folded from a long, realistic log.

Run with: .venv/bin/python -m benchmarks.bench_gate
"""

from __future__ import annotations

import os
import platform
import sys
import time
from datetime import UTC, datetime, timedelta
from typing import Literal

from lab.events.chain import EventChain, digest
from lab.events.types import (
    Action,
    AgentAudioPlayed,
    AgentAudioStarted,
    AgentUtterance,
    Args,
    CallerUnderstood,
    CallerUtterance,
    Channel,
    CommitStarted,
    CommitSucceeded,
    Event,
    EventPayload,
    GateRequest,
    IntentRevised,
    LookupFailed,
    LookupStarted,
    LookupSucceeded,
    Mode,
    Operation,
    Outcome,
    ProposalMade,
    Receipt,
    RunStarted,
    SpeechEnded,
    SpeechStarted,
    Transcribed,
    TurnLatency,
    UnderstandingKind,
)
from lab.policy.gate import GATE_VERSION, GateState

ROUNDS = 300
CALLS = 120_000
T0 = datetime(2026, 1, 1, tzinfo=UTC)
DAYS = ("monday", "tuesday", "wednesday", "thursday", "friday")


class Recorder:
    """Appends payloads to a chain and folds them into the gate, recording its reactions."""

    def __init__(self) -> None:
        self.chain = EventChain()
        self.gate = GateState()

    def add(self, payload: EventPayload) -> Event:
        at = T0 + timedelta(milliseconds=10 * len(self.chain.events))
        event = self.chain.append(payload, at=at)
        self.gate.apply(event)
        for reaction in self.gate.reactions(event):
            self.add(reaction)
        return event

    def caller_turn(self, kind: UnderstandingKind, text: str, args: Args | None = None) -> Event:
        """One spoken caller turn with the voice pipeline's events around it."""
        self.add(SpeechStarted(stream_ms=len(self.chain.events) * 100))
        self.add(SpeechEnded(stream_ms=len(self.chain.events) * 100, segment_ms=1800))
        self.add(Transcribed(text=text, segment_ms=1800, latency_ms=350, model="tiny.en"))
        utterance = self.add(CallerUtterance(text=text, source="asr"))
        understood = self.add(
            CallerUnderstood(
                utterance_event_id=utterance.id,
                kind=kind,
                action=Action.BOOK if args else None,
                args=args or {},
            )
        )
        self.add(
            TurnLatency(
                caller_event_id=utterance.id,
                endpointing_ms=300,
                recognition_ms=350,
                agent_ms=2,
                synthesis_ms=120,
                total_ms=772,
            )
        )
        return understood

    def agent_says(
        self, text: str, purpose: Literal["readback", "receipt"], proposal_id: str | None = None
    ) -> Event:
        utterance = self.add(
            AgentUtterance(
                text=text,
                purpose=purpose,
                duration_ms=2000,
                proposal_id=proposal_id,
            )
        )
        self.add(AgentAudioStarted(utterance_event_id=utterance.id, synth_ms=120))
        self.add(AgentAudioPlayed(utterance_event_id=utterance.id, played_ms=2000, total_ms=2000))
        return utterance


def build(rounds: int) -> tuple[Recorder, dict[str, list[GateRequest]]]:
    """A run of many corrected, confirmed and executed bookings, ending on one awaiting commit."""
    rec = Recorder()
    rec.add(
        RunStarted(
            run_id="run-bench",
            scenario_id="book-appointment",
            scenario_version=1,
            contract_hash="c" * 64,
            mode=Mode.GUARDED,
            channel=Channel.VOICE,
            evaluator_version="eval-1",
            gate_version=GATE_VERSION,
            agent_version="agent-1",
        )
    )
    requests: dict[str, list[GateRequest]] = {"executed": [], "expired": []}
    for revision in range(1, rounds + 1):
        args: Args = {"day": DAYS[revision % len(DAYS)], "time": f"{9 + revision % 8:02d}:00"}
        kind = UnderstandingKind.CORRECTION if revision > 1 else UnderstandingKind.REQUEST
        understood = rec.caller_turn(kind, f"book {args['day']}", args)
        rec.add(
            IntentRevised(
                revision=revision,
                action=Action.BOOK,
                args=args,
                supersedes=revision - 1 or None,
                understood_event_id=understood.id,
            )
        )
        read(rec, revision, args, fails_first=revision % 3 == 0)
        made = ProposalMade(
            proposal_id=f"p-{revision}",
            revision=revision,
            action=Action.BOOK,
            args=args,
            args_hash=digest(args),
        )
        rec.add(made)
        rec.agent_says(f"Shall I book {args['day']}?", "readback", made.proposal_id)
        confirmation = rec.caller_turn(UnderstandingKind.CONFIRM, "yes, confirm")
        request = GateRequest(
            operation=Operation.COMMIT,
            action=Action.BOOK,
            revision=revision,
            args=args,
            proposal_id=made.proposal_id,
            confirmation_event_id=confirmation.id,
        )
        if revision == rounds:
            requests["awaiting"] = [request]
            requests["changed"] = [request.model_copy(update={"args": {**args, "time": "23:00"}})]
        elif revision % 5 == 0:
            # Corrected before it was committed: the next revision expires it.
            requests["expired"].append(request)
        else:
            execute(rec, request, made)
            requests["executed"].append(request)
    return rec, requests


def read(rec: Recorder, revision: int, args: Args, *, fails_first: bool) -> None:
    for attempt in range(1, 2 + fails_first):
        attempt_id = f"lk-{revision}-{attempt}"
        rec.add(
            LookupStarted(
                attempt_id=attempt_id,
                attempt=attempt,
                revision=revision,
                action=Action.BOOK,
                query=args,
            )
        )
        if fails_first and attempt == 1:
            rec.add(LookupFailed(attempt_id=attempt_id, failure_kind="timeout", reason="5 s"))
        else:
            rec.add(LookupSucceeded(attempt_id=attempt_id, options=[args, {"day": "saturday"}]))


def execute(rec: Recorder, request: GateRequest, made: ProposalMade) -> None:
    decision = rec.gate.decide(request)
    assert decision.outcome is Outcome.ALLOW and decision.idempotency_key is not None
    authorized = rec.add(decision)
    attempt_id = f"cm-{made.proposal_id}"
    rec.add(
        CommitStarted(
            attempt_id=attempt_id,
            idempotency_key=decision.idempotency_key,
            action=made.action,
            args=made.args,
            args_hash=made.args_hash,
            revision=made.revision,
            proposal_id=made.proposal_id,
            confirmation_event_id=request.confirmation_event_id,
            authorized_by=authorized.id,
        )
    )
    receipt = Receipt(
        receipt_id=f"rc-{made.proposal_id}",
        execution_id=f"ex-{made.proposal_id}",
        idempotency_key=decision.idempotency_key,
        adapter="appointments",
        action=made.action,
        args=made.args,
    )
    rec.add(CommitSucceeded(attempt_id=attempt_id, receipt=receipt, replayed=False))
    rec.agent_says("Booked.", "receipt")


def percentile(sorted_ns: list[int], q: float) -> float:
    return sorted_ns[round(q * (len(sorted_ns) - 1))] / 1000


def main() -> None:
    rec, requests = build(ROUNDS)
    state = GateState.from_events(rec.chain.events)
    # Round-robin over the groups, so the rare awaiting commit weighs as much as the replays.
    groups = list(requests.values())
    timings: dict[str, list[int]] = {}
    clock = time.perf_counter_ns
    for i in range(CALLS):
        group = groups[i % len(groups)]
        request = group[(i // len(groups)) % len(group)]
        start = clock()
        decision = state.decide(request)
        elapsed = clock() - start
        timings.setdefault(decision.reason_kind, []).append(elapsed)
    every = sorted(ns for samples in timings.values() for ns in samples)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs")
    print(f"python {platform.python_version()} on {sys.platform}")
    print(f"log: {len(rec.chain.events)} events; {CALLS} commit decisions")
    print(f"{'reason_kind':<18}{'calls':>8}{'p50 us':>9}{'p99 us':>9}")
    for kind, samples in sorted(timings.items()):
        print(row(kind, sorted(samples)))
    print(row("all", every))


def row(name: str, sorted_ns: list[int]) -> str:
    p50, p99 = percentile(sorted_ns, 0.5), percentile(sorted_ns, 0.99)
    return f"{name:<18}{len(sorted_ns):>8}{p50:>9.2f}{p99:>9.2f}"


if __name__ == "__main__":
    main()
