"""The HTTP sandbox a deployed bot's tools point at: matched to the live call, refused otherwise."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest

from lab.connectors.interface import ToolCall, ToolResult
from lab.connectors.live_calls import LiveCall, call_closed, call_opened
from lab.web.sandbox_http import TOKEN_ENV, sandbox_app

TOKEN = "the-teams-sandbox-token"


class Recorded:
    def __init__(self, wire: dict[str, object] | None = None) -> None:
        self.calls: list[ToolCall] = []
        self.wire = wire

    async def call(self, call: ToolCall) -> ToolResult:
        self.calls.append(call)
        return ToolResult(call.call_id, "ok", {"options": []}, wire=self.wire)


@pytest.fixture
async def client(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[httpx.AsyncClient]:
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    transport = httpx.ASGITransport(app=sandbox_app)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(transport=transport, base_url="http://lab", headers=headers) as c:
        yield c


@pytest.fixture
def calls() -> Iterator[dict[str, Recorded]]:
    opened = {"call-a": Recorded(), "call-b": Recorded(wire={"slots": ["tue-0930"]})}
    for call_id, tools in opened.items():
        call_opened(LiveCall(call_id, "ws://bot/media", tools))
    yield opened
    for call_id in opened:
        call_closed(call_id)


async def test_a_tool_call_goes_to_the_call_it_names_and_answers_in_its_shape(
    client: httpx.AsyncClient, calls: dict[str, Recorded]
) -> None:
    args = {"day": "tuesday"}
    response = await client.post(
        "/sandbox/tools/find_slots", json={"arguments": args, "call_id": "call-b"}
    )
    assert response.status_code == 200 and response.json() == {"slots": ["tue-0930"]}
    [made] = calls["call-b"].calls
    assert (made.name, made.arguments) == ("find_slots", args) and not calls["call-a"].calls
    response = await client.post("/sandbox/tools/x", json={"call_id": "call-a"})
    assert response.json() == {"kind": "ok", "content": {"options": []}, "reason": ""}


async def test_a_tool_call_matching_no_live_call_is_refused(
    client: httpx.AsyncClient, calls: dict[str, Recorded]
) -> None:
    response = await client.post("/sandbox/tools/x", json={"call_id": "gone"})
    assert response.status_code == 404 and "no live call" in response.json()["error"]
    # Two calls live and none named: the lab will not guess which.
    response = await client.post("/sandbox/tools/x", json={})
    assert response.status_code == 404 and "2 calls are live" in response.json()["error"]
    assert not any(recorded.calls for recorded in calls.values())


async def test_the_only_live_call_takes_a_call_that_names_none(
    client: httpx.AsyncClient,
) -> None:
    only = Recorded()
    call_opened(LiveCall("only", "ws://bot/media", only))
    try:
        response = await client.post("/sandbox/tools/x", json={"arguments": {}})
    finally:
        call_closed("only")
    assert response.status_code == 200 and len(only.calls) == 1


@pytest.mark.parametrize(
    ("headers", "body", "status"),
    [
        ({"Authorization": "Bearer wrong"}, b"{}", 401),
        ({}, b"[1, 2]", 400),
        ({}, b'{"arguments": {}, "extra": 1}', 400),
        ({}, b"x" * (70 * 1024), 413),
    ],
)
async def test_bad_requests_are_refused_with_why(
    client: httpx.AsyncClient,
    calls: dict[str, Recorded],
    headers: dict[str, str],
    body: bytes,
    status: int,
) -> None:
    response = await client.post("/sandbox/tools/x", content=body, headers=headers)
    assert response.status_code == status and response.json()["error"]
    assert not any(recorded.calls for recorded in calls.values())


async def test_no_token_set_opens_nothing(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(TOKEN_ENV)
    response = await client.post("/sandbox/tools/x", json={})
    assert response.status_code == 401
