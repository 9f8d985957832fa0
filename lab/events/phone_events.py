"""What a phone call measured on the line's clock: turn latency and each barge-in's timing."""

from __future__ import annotations

from typing import Literal

from lab.events.vocabulary import PayloadModel


class PhoneLatency(PayloadModel):
    """One reply over the phone: the caller's last voiced sample → the bot's first audio."""

    type: Literal["phone.latency"] = "phone.latency"
    latency_ms: int


class PhoneBargeIn(PayloadModel):
    """A caller line streamed over the bot's readback, as the network played both.

    into_ms: how much of the readback's own audio had played when the caller's first voiced
    sample went out (late_ms of it past the scenario's point, what recognizing the readback
    took); response_ms: that sample → the bot's
    `clear` or the end of its audio; talk_over_ms: how long both were heard at once.
    """

    type: Literal["phone.barge_in"] = "phone.barge_in"
    into_ms: int
    late_ms: int
    response_ms: int
    talk_over_ms: int
    cleared: bool
