"""What the alert tests share: flagged audit entries and a real webhook receiver on loopback."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from lab.audit.imported import grade_transcript
from lab.audit.schema import AuditEntry
from lab.audit.transcript import parse_transcript
from lab.facts.loader import load_tenant
from lab.grading.grader import DeterministicGrader
from lab.grading.schema import Severity
from tests.audit.calls import demo_calls, jsonl

# Everything a test waits on is an event; this only bounds a wait that would otherwise hang.
PATIENCE_S = 120.0


def graded_entries() -> list[AuditEntry]:
    turns = parse_transcript(jsonl(demo_calls()[0]), max_bytes=1 << 20)
    return grade_transcript(
        turns,
        constraints=load_tenant("demo"),
        tenant="demo",
        agent="demo-agent",
        grader=DeterministicGrader(),
        graded_at=datetime(2026, 5, 4, 9, 30, tzinfo=UTC),
        timer=time.perf_counter,
    )


def critical_entries() -> list[AuditEntry]:
    return [e for e in graded_entries() if e.flagged and e.grade.severity is Severity.CRITICAL]


def with_severity(entry: AuditEntry, severity: Severity) -> AuditEntry:
    return entry.model_copy(update={"grade": entry.grade.model_copy(update={"severity": severity})})


@dataclass
class Request:
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Receiver:
    """Records every POST; answers each with the next scripted status (then 200).

    With stall_first, the first request is held unanswered until release() (or shutdown).
    """

    statuses: list[int] = field(default_factory=list)
    stall_first: bool = False
    url: str = ""
    requests: list[Request] = field(default_factory=list)
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _release: threading.Event = field(default_factory=threading.Event)

    def record(self, request: Request) -> tuple[int, bool]:
        with self._changed:
            self.requests.append(request)
            first = len(self.requests) == 1
            status = self.statuses.pop(0) if self.statuses else 200
            self._changed.notify_all()
        return status, first and self.stall_first

    def wait_for(self, count: int) -> list[Request]:
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.requests) >= count, PATIENCE_S):
                raise AssertionError(f"{len(self.requests)} requests came, waited for {count}")
            return list(self.requests)

    def release(self) -> None:
        self._release.set()


@contextmanager
def receiver(statuses: list[int] | None = None, *, stall_first: bool = False) -> Iterator[Receiver]:
    """A Receiver served by http.server on a free loopback port, for the with-block."""
    state = Receiver(statuses=list(statuses or []), stall_first=stall_first)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            status, stall = state.record(Request(dict(self.headers.items()), body, time.time()))
            if stall:
                state._release.wait(PATIENCE_S)
                return
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/lab"
    try:
        yield state
    finally:
        state.release()
        server.shutdown()
        server.server_close()
        thread.join()
