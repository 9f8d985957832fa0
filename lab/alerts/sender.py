"""One signed POST of an alert body to an endpoint, and what came of it (never raises)."""

from __future__ import annotations

import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from email.message import Message
from typing import IO, Any

from lab.alerts.signing import EVENT_ID_HEADER, SIGNATURE_HEADER, signature_header

USER_AGENT = "voice-reliability-lab-alerts/1"
# Enough of an answer to free the connection; the lab reads nothing from it.
_READ_LIMIT = 64 * 1024


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    error: str
    duration_ms: float

    @property
    def delivered(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    # A redirected POST would arrive as a bodiless GET elsewhere: a 3xx is a failed delivery.
    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: IO[bytes],
        code: int,
        msg: str,
        headers: Message,
        newurl: str,
    ) -> urllib.request.Request | None:
        return None


_opener = urllib.request.build_opener(_NoRedirects)


def post_alert(*, url: str, secret: str, event_id: str, body: bytes, timeout_s: float) -> Outcome:
    """POST body signed with secret; any answer or failure comes back as an Outcome."""
    request = urllib.request.Request(
        url,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            EVENT_ID_HEADER: event_id,
            SIGNATURE_HEADER: signature_header(secret, body, int(time.time())),
        },
    )
    started = time.perf_counter()
    status: int | None = None
    error = ""
    try:
        with _opener.open(request, timeout=timeout_s) as response:
            status = response.status
            response.read(_READ_LIMIT)
    except urllib.error.HTTPError as answer:
        status, error = answer.code, _reason(answer)
    except (urllib.error.URLError, OSError, ValueError) as failure:
        error = _reason(failure)
    return Outcome(status, error[:500], (time.perf_counter() - started) * 1000)


def _reason(failure: Any) -> str:
    reason = getattr(failure, "reason", None)
    return f"{type(failure).__name__}: {reason if reason is not None else failure}"
