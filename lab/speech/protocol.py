"""Speech request and reply messages, as they travel between web processes and speech workers.

A web process sends a request to its kind's shared queue (SPEECH_CHANNELS) with its own reply
channel; a worker takes one of a kind only while that model is free, and answers there with the
same request id. Messages are plain dicts on the channel layer (msgpack on Redis carries the PCM
as bytes); these models parse them at both ends.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

Kind = Literal["asr", "tts", "turn"]
KINDS: tuple[Kind, ...] = ("asr", "tts", "turn")
# One queue per model, so a worker busy recognizing still takes a synthesis.
SPEECH_CHANNELS: dict[Kind, str] = {kind: f"lab-speech.{kind}" for kind in KINDS}
_PCM_BYTES_PER_S = 32000
# Spoken text runs at about 15 characters a second; synthesis is several times faster.
_CHARS_PER_S = 15


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class AsrOptions(_Message):
    """Keywords for one recognition; those left at their defaults are not passed on."""

    prompt_free: bool = False

    def keywords(self) -> dict[str, Any]:
        """The keywords `asr.transcribe` is called with (none, at the defaults)."""
        return self.model_dump(exclude_defaults=True)


class _Request(_Message):
    request_id: str = Field(min_length=1, max_length=64)
    reply_channel: str = Field(min_length=1, max_length=100)
    attempt: int = Field(ge=1)
    # Wall-clock time (time.time()) after which the asker has given up on this attempt.
    deadline: float


class AsrRequest(_Request):
    type: Literal["asr.request"] = "asr.request"
    pcm: bytes
    options: AsrOptions = AsrOptions()


class TtsRequest(_Request):
    type: Literal["tts.request"] = "tts.request"
    text: str = Field(min_length=1)


class TurnRequest(_Request):
    """P(the caller's turn is complete) from the turn model, for the segment so far."""

    type: Literal["turn.request"] = "turn.request"
    pcm: bytes


class AsrReply(_Message):
    type: Literal["asr.reply"] = "asr.reply"
    request_id: str
    text: str
    audio_ms: int
    elapsed_ms: int
    window_ms: int


class TtsReply(_Message):
    type: Literal["tts.reply"] = "tts.reply"
    request_id: str
    pcm: bytes


class TurnReply(_Message):
    type: Literal["turn.reply"] = "turn.reply"
    request_id: str
    probability: float = Field(ge=0.0, le=1.0)


class SpeechFailed(_Message):
    """A worker took the request but could not serve it."""

    type: Literal["speech.failed"] = "speech.failed"
    request_id: str
    reason: str


AnyRequest = AsrRequest | TtsRequest | TurnRequest
AnyReply = AsrReply | TtsReply | TurnReply | SpeechFailed
SpeechRequest = Annotated[AnyRequest, Field(discriminator="type")]
SpeechReply = Annotated[AnyReply, Field(discriminator="type")]
REQUEST: TypeAdapter[AnyRequest] = TypeAdapter(SpeechRequest)
REPLY: TypeAdapter[AnyReply] = TypeAdapter(SpeechReply)


def asr_timeout_s(base_s: float, pcm: bytes) -> float:
    """How long one recognition may take: the base, plus the length of the audio."""
    return base_s + len(pcm) / _PCM_BYTES_PER_S


def tts_timeout_s(base_s: float, text: str) -> float:
    """How long one synthesis may take: the base, plus about how long the text lasts spoken."""
    return base_s + len(text) / _CHARS_PER_S
