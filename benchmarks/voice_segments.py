"""The audio the voice path hands to recognition for each scripted caller line.

A voice run says a line with 300 ms of quiet before it and the end silence plus 400 ms after it,
over the contract's phone line where it has one (lab/runs/voice.py); the endpointer cuts it with
the lab's settings, and recognition starts on the segment so far once LAB_ASR_EARLY_MS of pause
has passed (lab/runs/caller_audio.py): pre-roll, the words and that much silence. That early
segment is what the caller is heard as; the one the fallback ends (500 ms of silence) is kept
beside it, and the bare clip, for comparison.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from lab.audio.frames import BYTES_PER_MS, split_frames
from lab.audio.vad import Endpointer, SpeechEnd, VadConfig, engine_named
from lab.runs.phone_line import impair_line
from lab.scenarios.catalog import all_contracts
from lab.scenarios.line import PhoneLine
from lab.speech.service import sentence_pcm

LEAD_MS = 300
_TAIL_EXTRA_MS = 400


@dataclass(frozen=True, slots=True)
class Segment:
    scenario: str
    line: int
    say: str
    # bare, early or final (voice path), impaired-early or impaired-final (over the phone line)
    kind: str
    pcm: bytes


def cut(audio: bytes) -> list[tuple[bytes | None, bytes]]:
    """(early, final) per segment the lab's endpointer cuts: early as recognition starts on it
    (None if the turn ended before a pause that long), final as the fallback ends it."""
    endpointer = Endpointer(
        VadConfig(
            engine=engine_named(settings.LAB_VAD_ENGINE),
            aggressiveness=settings.LAB_VAD_AGGRESSIVENESS,
            end_silence_ms=settings.LAB_VAD_END_SILENCE_MS,
            silero_confirms=settings.LAB_VAD_SILERO_CONFIRMS,
        )
    )
    early: bytes | None = None
    segments = []
    for frame in split_frames(audio):
        events = endpointer.push(frame)
        for event in events:
            if isinstance(event, SpeechEnd):
                segments.append((early, event.pcm))
                early = None
        silence_ms = endpointer.trailing_silence_ms if not events else -1
        if silence_ms == 0:
            early = None  # the caller went on: the early recognition is cancelled
        elif early is None and silence_ms >= settings.LAB_ASR_EARLY_MS:
            early = endpointer.segment_pcm
    return segments


def spoken(pcm: bytes, phone: PhoneLine | None = None, line: int = 0) -> bytes:
    """The line as the lab receives it in a voice run: quiet around it, over the phone line."""
    tail_ms = settings.LAB_VAD_END_SILENCE_MS + _TAIL_EXTRA_MS
    if phone is not None and phone.on(line):
        return impair_line(phone, line, pcm, lead_ms=LEAD_MS, tail_ms=tail_ms).pcm
    return bytes(LEAD_MS * BYTES_PER_MS) + pcm + bytes(tail_ms * BYTES_PER_MS)


def segments(text: str, phone: PhoneLine | None = None, line: int = 0) -> list[tuple[str, bytes]]:
    """(kind, pcm) for one line: the bare clip (clean lines) and the voice path's segments."""
    pcm = sentence_pcm(text)
    impaired = phone is not None and bool(phone.on(line))
    prefix = "impaired-" if impaired else ""
    found = [] if impaired else [("bare", pcm)]
    for early, final in cut(spoken(pcm, phone, line)):
        if early is not None:
            found.append((f"{prefix}early", early))
        found.append((f"{prefix}final", final))
    return found


def scenario_segments() -> list[Segment]:
    """Every scripted caller line of every contract, each distinct audio once."""
    seen: set[bytes] = set()
    found = []
    for scenario, contract in sorted(all_contracts().items()):
        for number, line in enumerate(contract.caller):
            for kind, pcm in segments(line.say, contract.line, number):
                if pcm not in seen:
                    seen.add(pcm)
                    found.append(Segment(scenario, number, line.say, kind, pcm))
    return found
