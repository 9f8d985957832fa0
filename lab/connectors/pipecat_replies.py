"""What a pipecat bot's RTVI reports make of one reply (the wire itself: pipecat_eval.py)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any

from lab.connectors.chat_wire import Sentences
from lab.connectors.interface import (
    AgentFault,
    AgentOutput,
    Said,
    ToolCall,
    ToolObserved,
    TurnFinished,
)
from lab.connectors.pipecat_audio import BotVoice

_TEXT_TYPES = ("bot-llm-text", "llm-raw-text")
# Once the bot's LLM is done and neither its TTS nor its voice is busy, this long without the
# rest of its words (a TTS that rewrote them) ends the turn: not a fault, the audio is all there
# is. Generous: a loaded machine's TTS can take seconds to start on the next sentence.
_SPOKEN_GRACE_S = 5.0
# What the connector hands a reply when that grace ran out (no bot sends it).
GRACE_OVER = "lab-spoken-grace-over"

Starts = Callable[[str, dict[str, Any]], bool]


def echo_of(sent_id: str) -> Starts:
    return lambda kind, data: kind == "user-input" and str(data.get("msg_id")) == sent_id


def transcribed(kind: str, data: dict[str, Any]) -> bool:
    return kind == "user-transcription" and data.get("final") is True


class Reply:
    """One reply as its RTVI reports arrive; `take` turns each into the outputs it makes."""

    def __init__(self) -> None:
        self.sentences = Sentences()
        self.text_type: str | None = None
        self.started_calls = self.outstanding = 0
        self.calls: dict[str, ToolCall] = {}
        self.finished = False

    def grace_s(self) -> float | None:
        """How long the bot may stay quiet before its turn is taken as over; None: the timeout."""
        return None

    def take(self, kind: str, data: dict[str, Any]) -> list[AgentOutput]:
        if kind in _TEXT_TYPES and isinstance(data.get("text"), str):
            self.text_type = self.text_type or kind
            if kind == self.text_type:
                return [Said(sentence) for sentence in self.sentences.feed(data["text"])]
        elif kind == "bot-llm-started":
            self.started_calls = 0
        elif kind == "llm-function-call-started":
            self.started_calls += 1
            self.outstanding += 1
        elif kind == "llm-function-call-in-progress":
            call = _call(data)
            self.calls[call.call_id] = call
        elif kind == "llm-function-call-stopped":
            self.outstanding = max(0, self.outstanding - 1)
            call_id = str(data.get("tool_call_id", ""))
            call = self.calls.pop(call_id) if call_id in self.calls else _call(data)
            if not data.get("cancelled"):
                return [ToolObserved(call, _result(data.get("result")))]
        elif kind == "bot-llm-stopped":
            said: list[AgentOutput] = [Said(s) for s in self.sentences.rest()]
            if self.started_calls == 0 and self.outstanding == 0:
                self.finished = True
                return [*said, TurnFinished()]
            return said
        elif kind in ("error", "error-response"):
            self.finished = True
            return [AgentFault("malformed", f"the bot reported an error: {data.get('error')}")]
        return []


class VoicedReply(Reply):
    """Audio mode: the words as the bot spoke them, each with its audio; the turn ends once the
    bot's LLM is done and the bot has stopped speaking what it said.

    A sentence's audio is whole only once the bot has spoken it, so the lab would hear each one
    a sentence late, with a gap before the next that a caller's barge-in falls into. The
    sentences of one stretch of speech are handed over together when it ends (or before a tool
    call, to keep the order), so the lab plays them as the bot did: back to back.
    """

    def __init__(self) -> None:
        super().__init__()
        self.voice = BotVoice()
        self.llm_done = self.speaking = self.synthesizing = False
        self.written = self.spoken = 0  # letters and digits the LLM wrote, and the bot spoke
        self.held: list[AgentOutput] = []

    def grace_s(self) -> float | None:
        return _SPOKEN_GRACE_S if self.llm_done and not self._busy else None

    @property
    def _busy(self) -> bool:
        return self.speaking or self.synthesizing

    def take(self, kind: str, data: dict[str, Any]) -> list[AgentOutput]:
        outputs = self._take(kind, data)
        self.held.extend(o for o in outputs if isinstance(o, Said))
        rest = [o for o in outputs if not isinstance(o, Said)]
        if rest or not self.speaking:
            released, self.held = self.held, []
            return [*released, *rest]
        return []

    def _take(self, kind: str, data: dict[str, Any]) -> list[AgentOutput]:
        match kind:
            case "eval-bot-audio":
                problem = self.voice.take(data)
                if problem is not None:
                    self.finished = True
                    return [AgentFault("malformed", f"the bot sent {problem}")]
            case "bot-tts-text" if isinstance(data.get("text"), str):
                self.spoken += _letters(data["text"])
                audio = self.voice.sentence()
                return self._done_yet([Said(data["text"].strip(), audio=audio)])
            case "bot-llm-text" | "llm-raw-text" if isinstance(data.get("text"), str):
                self.text_type = self.text_type or kind
                if kind == self.text_type:
                    self.written += _letters(data["text"])
            case "bot-tts-started" | "bot-tts-stopped":
                self.synthesizing = kind == "bot-tts-started"
            case "bot-started-speaking":
                self.speaking = True
            case "bot-stopped-speaking":
                self.speaking = False
                return self._done_yet([])
            case "bot-llm-stopped":
                self.llm_done = self.started_calls == 0 and self.outstanding == 0
                return self._done_yet([])
            case _ if kind == GRACE_OVER:
                return self._done_yet([], grace_over=True)
            case _:
                return super().take(kind, data)
        return []

    def _done_yet(self, outputs: list[AgentOutput], grace_over: bool = False) -> list[AgentOutput]:
        all_spoken = self.spoken >= self.written or grace_over
        if self.llm_done and not self._busy and all_spoken:
            self.finished = True
            return [*outputs, TurnFinished()]
        return outputs


def _letters(text: str) -> int:
    return sum(ch.isalnum() for ch in text)


def _call(data: dict[str, Any]) -> ToolCall:
    arguments = data.get("arguments")
    return ToolCall(
        call_id=str(data.get("tool_call_id", "")),
        name=str(data.get("function_name") or ""),
        arguments=dict(arguments) if isinstance(arguments, dict) else {},
    )


def _result(result: object) -> dict[str, Any] | None:
    """A function's result as reported: an object as is, anything else (a string) wrapped."""
    if result is None:
        return None
    if isinstance(result, dict):
        return result
    if isinstance(result, str):
        with contextlib.suppress(ValueError):
            parsed = json.loads(result)
            if isinstance(parsed, dict):
                return parsed
    return {"value": result}
