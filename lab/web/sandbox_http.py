"""A deployed bot's own tools over plain HTTP, served from the run's sandbox behind the gate.

`POST /sandbox/tools/<name>` with `Authorization: Bearer <LAB_SANDBOX_TOKEN>` and a JSON body
`{"arguments": {...}, "call_id": "<lab_call_id>"}` (call_id may be left out while only one call
is live). A registered agent has its own stable sandbox, `POST /sandbox/agents/<tenant>/<slug>/
tools/<name>` with the token issued on its page, that matches only that agent's live calls. The
call goes to the matching live call's ToolBox (gated in guarded runs, recorded always) and the
answer is the agent's own result shape (`ToolResult.wire`), else the lab's wrapper. A call that
matches no live call (or two, naming neither) is refused (404) with the reason in JSON and
recorded: on the agent it was sent to, else in the log (it has no run to go in).
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import uuid
from typing import Any

from asgiref.sync import sync_to_async
from pydantic import BaseModel, ConfigDict, ValidationError

from lab.accounts.agent_sandbox import (
    PREFIX,
    owner_of,
    sandbox_refusal_record,
    sandbox_token_valid,
)
from lab.connectors.interface import ToolCall
from lab.connectors.live_calls import NoLiveCall, call_matched
from lab.web.security import Receive, Scope, Send

MOUNT = "/sandbox/"
TOOLS = "/sandbox/tools/"
TOKEN_ENV = "LAB_SANDBOX_TOKEN"
MAX_BODY_BYTES = 64 * 1024
log = logging.getLogger(__name__)


class SandboxCall(BaseModel):
    model_config = ConfigDict(extra="forbid")

    arguments: dict[str, Any] = {}
    call_id: str | None = None


async def _answer(send: Send, status: int, body: dict[str, Any]) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def _bearer(scope: Scope) -> str:
    sent = dict(scope.get("headers", [])).get(b"authorization", b"").decode("latin-1")
    return sent.removeprefix("Bearer ") if sent.startswith("Bearer ") else ""


def _authorized(scope: Scope) -> bool:
    token = os.environ.get(TOKEN_ENV, "")
    return bool(token) and hmac.compare_digest(_bearer(scope), token)


def _route(path: str) -> tuple[str | None, str] | None:
    """(the registered agent "tenant/slug" or None for the lab's own sandbox, the tool's name)."""
    if path.startswith(TOOLS):
        name, owner = path.removeprefix(TOOLS), None
    else:
        parts = path.removeprefix(PREFIX).split("/")
        if not path.startswith(PREFIX) or len(parts) != 4 or parts[2] != "tools":
            return None
        name, owner = parts[3], owner_of(parts[0], parts[1])
    return (owner, name) if name else None


async def _body(receive: Receive) -> bytes | None:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if len(body) > MAX_BODY_BYTES:
            return None
        if not message.get("more_body"):
            return body


async def sandbox_app(scope: Scope, receive: Receive, send: Send) -> None:
    """The ASGI app under MOUNT."""
    route = _route(scope["path"])
    if route is None:
        where = "/sandbox/tools/<tool name> or /sandbox/agents/<tenant>/<agent>/tools/<tool name>"
        await _answer(send, 404, {"error": f"POST {where}"})
        return
    owner, name = route
    if scope["method"] != "POST":
        await _answer(send, 405, {"error": "POST only"})
        return
    if owner is None and not _authorized(scope):
        await _answer(send, 401, {"error": f"a bearer token the lab's {TOKEN_ENV} names"})
        return
    tenant, _, slug = (owner or "").partition("/")
    if owner is not None and not await sync_to_async(sandbox_token_valid)(
        tenant, slug, _bearer(scope)
    ):
        await _answer(send, 401, {"error": f"the sandbox token issued on {owner}'s agent page"})
        return
    body = await _body(receive)
    if body is None:
        await _answer(send, 413, {"error": f"bodies stop at {MAX_BODY_BYTES} bytes"})
        return
    try:
        request = SandboxCall.model_validate_json(body or b"{}")
    except ValidationError as error:
        await _answer(send, 400, {"error": f"not a tool call: {error.errors()[0]['msg']}"})
        return
    try:
        live = call_matched(request.call_id, owner)
    except NoLiveCall as error:
        log.warning("sandbox tool call %s refused: %s", name, error)
        if owner is not None:
            reason = f"{name}: {error}"
            await sync_to_async(sandbox_refusal_record)(tenant=tenant, slug=slug, reason=reason)
        await _answer(send, 404, {"error": str(error), "kind": "no_live_call"})
        return
    result = await live.tools.call(
        ToolCall(f"http-{uuid.uuid4().hex[:12]}", name, request.arguments)
    )
    wrapped = {"kind": result.kind, "content": result.content, "reason": result.reason}
    await _answer(send, 200, result.wire if result.wire is not None else wrapped)


class SandboxMount:
    """MOUNT to the sandbox, everything else to the app beneath."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith(MOUNT):
            await sandbox_app(scope, receive, send)
        else:
            await self.app(scope, receive, send)
