"""twilio:https://… — the lab POSTs Twilio's signed voice webhook to a real HTTP server that
checks the signature as Twilio documents it, follows the TwiML's <Connect><Stream> to the bot,
and gives a recorded end to every answer that leads to no stream."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl

import pytest

from lab.connectors import twilio_webhook
from lab.connectors.interface import AgentFault, Said, TurnFinished
from lab.connectors.registry import AgentSpec
from lab.connectors.twilio_media import CALL_PARAMETER, connect
from lab.connectors.twilio_webhook import TOKEN_ENV, stream_of
from tests.connectors.phone_bots import bot
from tests.connectors.test_twilio_media import FAST, answers, hears_length, one_turn

AUTH_TOKEN = "the-accounts-auth-token"


def twilio_valid(url: str, params: dict[str, str], signature: str) -> bool:
    """Twilio's documented check, written here from its docs (the twilio package is not
    installed): HMAC-SHA1 of the URL and each sorted name+value, base64."""
    data = url + "".join(name + params[name] for name in sorted(params))
    expected = hmac.new(AUTH_TOKEN.encode(), data.encode(), hashlib.sha1).digest()
    return hmac.compare_digest(base64.b64encode(expected).decode(), signature)


class Webhook:
    """A bot's voice webhook on loopback: it answers `twiml` once the signature checks out."""

    def __init__(self, twiml: str, status: int = 200, *, trickle_s: float = 0.0) -> None:
        self.twiml, self.status, self.trickle_s = twiml, status, trickle_s
        self.written = threading.Event()  # the whole answer went out
        self.posted: list[tuple[dict[str, str], bool]] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"])).decode()
                params = dict(parse_qsl(body))
                url = f"http://127.0.0.1:{self.server.server_address[1]}{self.path}"
                valid = twilio_valid(url, params, self.headers.get("X-Twilio-Signature", ""))
                hook.posted.append((params, valid))
                status = hook.status if valid else 403
                self.send_response(status)
                self.send_header("Content-Type", "text/xml")
                self.end_headers()
                answer = hook.twiml.encode() if status == 200 else b"no"
                # A trickling webhook sends its answer a byte at a time, each well within a
                # read timeout: only a deadline over the whole exchange cuts it.
                for piece in (
                    [answer[i : i + 1] for i in range(len(answer))] if hook.trickle_s else [answer]
                ):
                    with contextlib.suppress(OSError):
                        self.wfile.write(piece)
                        self.wfile.flush()
                    time.sleep(hook.trickle_s)
                hook.written.set()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/voice"

    def __enter__(self) -> Webhook:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def _twiml(stream_url: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?><Response><Connect>'
        f'<Stream url="{stream_url}"><Parameter name="tenant" value="acme"/></Stream>'
        "</Connect></Response>"
    )


def _call(url: str) -> Any:
    agent = connect(AgentSpec("twilio", url))
    agent.limits, agent._hear = FAST, hears_length
    return agent


@pytest.fixture(autouse=True)
def auth_token(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(TOKEN_ENV, AUTH_TOKEN)
    yield


async def test_the_signed_webhook_leads_to_the_stream_its_twiml_names() -> None:
    async with bot(answers) as (stream_url, heard):
        with Webhook(_twiml(stream_url)) as hook:
            outputs = await asyncio.wait_for(one_turn(_call(hook.url)), timeout=30)
    [(params, valid)] = hook.posted
    assert valid and params["CallStatus"] == "ringing" and params["Direction"] == "inbound"
    assert {"CallSid", "AccountSid", "From", "To"} <= set(params)
    start = heard[1]["start"]
    assert start["callSid"] == params["CallSid"] and start["accountSid"] == params["AccountSid"]
    assert start["customParameters"]["tenant"] == "acme"
    assert CALL_PARAMETER in start["customParameters"]
    assert isinstance(outputs[0], Said) and outputs[-1] == TurnFinished()


@pytest.mark.parametrize(
    ("twiml", "status", "words"),
    [
        ("<Response><Say>Hello</Say></Response>", 200, "no <Connect><Stream url=…>"),
        ("<Response><Connect><Stream url='https://x/y'/></Connect></Response>", 200, "not a ws"),
        ("not xml at all", 200, "not XML"),
        ("<Response/>", 500, "HTTP 500"),
    ],
)
async def test_an_answer_that_leads_to_no_stream_is_a_recorded_end(
    twiml: str, status: int, words: str
) -> None:
    with Webhook(twiml, status) as hook:
        agent = _call(hook.url)
        outputs = [o async for o in agent.greet(None)]  # type: ignore[arg-type]
        await agent.close()
    [fault] = outputs
    assert isinstance(fault, AgentFault) and fault.kind == "http_error" and words in fault.reason


async def test_a_webhook_that_trickles_its_twiml_is_cut_at_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(twilio_webhook, "DEADLINE_S", 0.5)
    with Webhook(_twiml("ws://127.0.0.1:9/media"), trickle_s=0.05) as hook:
        agent = _call(hook.url)
        [fault] = [o async for o in agent.greet(None)]  # type: ignore[arg-type]
        await agent.close()
        # The lab gave up while the answer was still coming, a byte at a time.
        assert not hook.written.is_set()
    assert isinstance(fault, AgentFault) and fault.kind == "http_error"
    assert "did not answer in full within 0.5 s" in fault.reason


async def test_a_wrong_auth_token_is_refused_by_the_bot_and_said(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(TOKEN_ENV, "someone-elses-token")
    with Webhook("<Response/>") as hook:
        agent = _call(hook.url)
        [fault] = [o async for o in agent.greet(None)]  # type: ignore[arg-type]
        await agent.close()
    assert hook.posted[0][1] is False
    assert isinstance(fault, AgentFault) and "HTTP 403" in fault.reason


def test_twiml_with_entities_is_refused_unparsed() -> None:
    bomb = '<!DOCTYPE r [<!ENTITY a "aaaa">]><Response>&a;</Response>'
    with pytest.raises(Exception, match="DOCTYPE"):
        stream_of(bomb)
