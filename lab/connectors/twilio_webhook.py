"""Twilio's voice webhook, for a bot that answers a call with TwiML before its media stream.

`twilio:https://HOST/PATH` (an http(s) URL where `twilio:wss://…` names the stream itself): the
lab POSTs the form parameters Twilio sends when a call comes in, signed with `X-Twilio-Signature`
as Twilio documents it (HMAC-SHA1 keyed with the account's auth token over the URL followed by
each parameter's name and value, sorted by name; base64). The auth token is read from
LAB_TWILIO_AUTH_TOKEN when the call is placed, never stored. The answer must be TwiML whose
`<Connect><Stream url=…>` names the bot's WebSocket; its `<Parameter>`s become the stream's
`customParameters`. Anything else is a WebhookRefused, said in words.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import os
import xml.etree.ElementTree as ElementTree
from urllib.parse import urlsplit

import httpx

from lab.connectors.pinning import Resolve, pinned_transport

TOKEN_ENV = "LAB_TWILIO_AUTH_TOKEN"
MAX_TWIML_BYTES = 64 * 1024
# The whole exchange, not the wait between two bytes: a webhook that trickles its TwiML is cut.
DEADLINE_S = 10.0


class WebhookRefused(Exception):
    """The voice webhook did not hand the call to a media stream."""


def twilio_signature(auth_token: str, url: str, params: dict[str, str]) -> str:
    """X-Twilio-Signature for a POST of params to url."""
    signed = url + "".join(name + params[name] for name in sorted(params))
    digest = hmac.new(auth_token.encode(), signed.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def incoming_call(*, call_sid: str, account_sid: str) -> dict[str, str]:
    """The form parameters of Twilio's voice webhook for an inbound call from the lab."""
    caller, called = "+15005550006", "+15005550001"  # Twilio's documented test numbers
    return {
        "AccountSid": account_sid,
        "ApiVersion": "2010-04-01",
        "CallSid": call_sid,
        "CallStatus": "ringing",
        "Called": called,
        "Caller": caller,
        "Direction": "inbound",
        "From": caller,
        "To": called,
    }


def stream_of(twiml: str) -> tuple[str, dict[str, str]]:
    """The `<Connect><Stream>` URL and its `<Parameter>`s; WebhookRefused for anything else."""
    if "<!DOCTYPE" in twiml or "<!ENTITY" in twiml:
        raise WebhookRefused("the webhook's TwiML declares a DOCTYPE or entities; TwiML has none")
    try:
        root = ElementTree.fromstring(twiml)
    except ElementTree.ParseError as error:
        raise WebhookRefused(f"the webhook's answer is not XML: {error}") from None
    if root.tag != "Response":
        raise WebhookRefused(f"the webhook's TwiML has <{root.tag}> where <Response> belongs")
    stream = root.find("./Connect/Stream")
    if stream is None:
        verbs = ", ".join(f"<{child.tag}>" for child in root) or "nothing"
        raise WebhookRefused(
            f"the webhook's TwiML has no <Connect><Stream url=…> (it has {verbs}): the lab "
            "reaches a bot only through a bidirectional media stream"
        )
    url = stream.get("url", "")
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        raise WebhookRefused(f"the TwiML's <Stream url={url!r}> is not a ws:// or wss:// URL")
    parameters = {
        str(p.get("name")): str(p.get("value", ""))
        for p in stream.findall("./Parameter")
        if p.get("name")
    }
    return url, parameters


async def answer_call(
    url: str, params: dict[str, str], resolve: Resolve | None
) -> tuple[str, dict[str, str]]:
    """POST the signed voice webhook and follow its TwiML to the media stream."""
    auth_token = os.environ.get(TOKEN_ENV, "")
    if not auth_token:
        raise WebhookRefused(
            f"{TOKEN_ENV} is not set: the lab signs Twilio's webhook with the auth token the "
            "bot checks X-Twilio-Signature against"
        )
    headers = {"X-Twilio-Signature": twilio_signature(auth_token, url, params)}
    transport = pinned_transport(resolve) if resolve is not None else None
    async with httpx.AsyncClient(
        transport=transport, timeout=DEADLINE_S, follow_redirects=False, trust_env=False
    ) as client:
        try:
            async with (
                asyncio.timeout(DEADLINE_S),
                client.stream("POST", url, data=params, headers=headers) as response,
            ):
                body = bytearray()
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) > MAX_TWIML_BYTES:
                        raise WebhookRefused(f"the webhook's TwiML ran past {MAX_TWIML_BYTES} B")
        except httpx.HTTPError as error:
            raise WebhookRefused(f"the voice webhook at {url} did not answer: {error}") from None
        except TimeoutError:
            raise WebhookRefused(
                f"the voice webhook at {url} did not answer in full within {DEADLINE_S:g} s"
            ) from None
    if response.status_code != 200:
        raise WebhookRefused(f"the voice webhook answered HTTP {response.status_code}, not 200")
    return stream_of(body.decode("utf-8", errors="replace"))
