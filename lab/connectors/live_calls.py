"""The calls to outside agents this process has open, by the lab's call id: where a bot's tool
calls over HTTP find the run they belong to (lab/web/sandbox_http.py). A run's session opens its
call whatever the wire (a phone line, pipecat's eval wire), so any agent that runs its tools
remotely can point them at the sandbox."""

from __future__ import annotations

from dataclasses import dataclass

from lab.connectors.interface import ToolBox


@dataclass(frozen=True)
class LiveCall:
    call_id: str
    endpoint: str  # the bot's public endpoint: calls to one bot are told apart from another's
    tools: ToolBox
    # The registered agent called ("tenant/slug", lab.accounts.agent_sandbox); "" for none.
    owner: str = ""


class NoLiveCall(LookupError):
    """A tool call that belongs to no live call (or cannot say which of several)."""


_LIVE: dict[str, LiveCall] = {}


def call_opened(call: LiveCall) -> None:
    _LIVE[call.call_id] = call


def call_closed(call_id: str, tools: ToolBox | None = None) -> None:
    """tools: only while the call still goes to that ToolBox (a rebuilt session's stays)."""
    held = _LIVE.get(call_id)
    if held is not None and (tools is None or held.tools is tools):
        del _LIVE[call_id]


def call_matched(call_id: str | None, owner: str | None = None) -> LiveCall:
    """The live call a tool call names, or the only live call when it names none; owner: only
    the calls to that registered agent (its own sandbox), else any."""
    whose = f" of {owner}" if owner is not None else ""
    if call_id:
        found = _LIVE.get(call_id)
        if found is None or (owner is not None and found.owner != owner):
            raise NoLiveCall(f"no live call{whose} has the id {call_id!r}")
        return found
    calls = [call for call in _LIVE.values() if owner is None or call.owner == owner]
    if len(calls) != 1:
        raise NoLiveCall(
            f"{len(calls)} calls{whose} are live and the tool call names none: pass the call's "
            "lab_call_id (Twilio's customParameters) as call_id"
        )
    return calls[0]
