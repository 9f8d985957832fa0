"""How much the lab reads from an agent, and how it says why a read broke. Pure: no I/O.

Every cap is far above what a real agent sends (a spoken reply is a few hundred bytes of text,
a tool call a few hundred more), so only a misbehaving server reaches one; past it the lab
stops reading and records an `agent.fault` of kind `oversize`.
"""

from __future__ import annotations

# A whole (non-streamed) Chat Completions body, and all the lines of one streamed reply: about
# 150,000 words, hours of speech.
MAX_REPLY_BYTES = 1 << 20
# One server-sent-event line: one chunk's JSON (a whole tool call fits many times over).
MAX_LINE_BYTES = 256 << 10
# An error body: only its first words become the fault's reason.
MAX_ERROR_BYTES = 16 << 10
# One WebSocket message from a pipecat bot (a 20-40 ms audio chunk is a few KiB of base64).
MAX_FRAME_BYTES = 1 << 20
# All a pipecat bot sends during one turn or its handshake: its voice at 24 kHz as base64 is
# 64 KiB a second, so four minutes of speech.
MAX_TURN_BYTES = 16 << 20


class Oversize(Exception):
    """An agent sent more than a cap allows; the message says what and which cap."""


def size(count: int) -> str:
    """A byte count as a person reads it (KiB and MiB are what the caps are written in)."""
    if count >= 1 << 20:
        return f"{count / (1 << 20):g} MiB"
    if count >= 1 << 10:
        return f"{count / (1 << 10):g} KiB"
    return f"{count} bytes"


class Budget:
    """Bytes left of one cap; `take` raises Oversize once they are spent."""

    def __init__(self, cap: int, what: str) -> None:
        self.cap, self.what, self.used = cap, what, 0

    def take(self, count: int) -> None:
        self.used += count
        if self.used > self.cap:
            raise Oversize(f"{self.what} passed {size(self.cap)}; the lab stopped reading it")


class LineSplitter:
    """Bytes in, whole lines out (without their ending), each line and the total capped."""

    def __init__(self, *, max_line: int = MAX_LINE_BYTES, max_total: int = MAX_REPLY_BYTES) -> None:
        self._max_line = max_line
        self._total = Budget(max_total, "the streamed reply")
        self._partial = b""

    def feed(self, data: bytes) -> list[str]:
        self._total.take(len(data))
        *lines, self._partial = (self._partial + data).split(b"\n")
        if len(self._partial) > self._max_line or any(len(x) > self._max_line for x in lines):
            raise Oversize(
                f"one line of the streamed reply passed {size(self._max_line)}; "
                "the lab stopped reading it"
            )
        return [line.decode(errors="replace").rstrip("\r") for line in lines]

    def finish(self) -> list[str]:
        """The last line, if the stream did not end with a line break."""
        rest, self._partial = self._partial, b""
        return [rest.decode(errors="replace").rstrip("\r")] if rest else []


def why(error: BaseException) -> str:
    """What broke, in words: the first exception down the cause chain that has a message, with
    its type (httpx's ReadError on a reset carries none; the OSError beneath it does)."""
    seen: BaseException | None = error
    while seen is not None:
        if str(seen).strip():
            return f"{type(seen).__name__}: {seen}"
        seen = seen.__cause__ or seen.__context__
    return f"{type(error).__name__} (the peer gave no reason)"
