"""The RTVI messages of pipecat's eval wire as the lab writes and measures them. Pure: no I/O."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

LABEL = "rtvi-ai"
PROTOCOL_VERSION = "2.2.0"


def public_endpoint(url: str) -> str:
    """The URL as reports show it: no user, password, query or fragment (where tokens hide)."""
    parts = urlsplit(url)
    netloc = parts.hostname or ""
    if parts.port:
        netloc += f":{parts.port}"
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def message(kind: str, data: dict[str, Any], message_id: str | None = None) -> str:
    body: dict[str, Any] = {"label": LABEL, "type": kind, "data": data}
    if message_id is not None:
        body["id"] = message_id
    return json.dumps(body)


def eval_message(kind: str, data: dict[str, Any], message_id: str) -> str:
    """One of the eval transport's own messages, in the `client-message` envelope."""
    return message("client-message", {"t": kind, "d": data}, message_id)


def bot_audio_s(data: dict[str, Any]) -> float:
    """Seconds of PCM16 mono audio in one eval-bot-audio message (base64: 4 characters, 3 bytes)."""
    audio, rate = data.get("audio"), data.get("sampleRate")
    if not isinstance(audio, str) or not isinstance(rate, int) or rate <= 0:
        return 0.0
    return len(audio) * 3 / 4 / 2 / rate
