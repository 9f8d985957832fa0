"""Stripe-style webhook signatures: `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "t.body")>`.

Pure: the time is handed in. Receivers call verify_signature with their own clock.
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-Lab-Signature"
EVENT_ID_HEADER = "X-Lab-Event-Id"
# A captured request replayed later than this is refused even with a valid signature.
DEFAULT_TOLERANCE_S = 300


class SignatureError(ValueError):
    """The request is not signed by the endpoint's secret, or was signed too long ago."""


def signature(secret: str, body: bytes, timestamp: int) -> str:
    return hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()


def signature_header(secret: str, body: bytes, timestamp: int) -> str:
    """The X-Lab-Signature value for body sent at timestamp."""
    return f"t={timestamp},v1={signature(secret, body, timestamp)}"


def verify_signature(
    secret: str, body: bytes, header: str, *, now: float, tolerance_s: float = DEFAULT_TOLERANCE_S
) -> int:
    """The signed timestamp if header signs body with secret within tolerance_s of now."""
    timestamp: int | None = None
    candidates: list[str] = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t":
            try:
                timestamp = int(value)
            except ValueError:
                raise SignatureError(f"the timestamp is not a whole number: {value!r}") from None
        elif key == "v1":
            candidates.append(value)
    if timestamp is None or not candidates:
        raise SignatureError("expected t=<unix seconds>,v1=<hex signature>")
    if abs(now - timestamp) > tolerance_s:
        raise SignatureError(f"signed at {timestamp}, more than {tolerance_s:g} s from now")
    expected = signature(secret, body, timestamp)
    # Several v1 values let a sender sign with an old and a new secret while rotating.
    if not any(hmac.compare_digest(expected, candidate) for candidate in candidates):
        raise SignatureError("no v1 signature matches the body")
    return timestamp
