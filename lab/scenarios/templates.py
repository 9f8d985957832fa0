"""The seed's five failure families, written out for each material action of a tools file. Pure.

The families (a correction, no confirmation, a failed lookup, an interruption of the readback, a
repeated confirmation) are data (scenarios/templates/families.json), one set per shape of action;
a commit tool's name gives the words its scenarios speak ("reserve_table": reserve, a table).
The contracts are the team's to edit; each is checked as any contract is.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from lab.agent_tools.inference import ToolMeaning
from lab.agent_tools.schema import Kind
from lab.agent_tools.toolset import Toolset
from lab.events.types import Action
from lab.scenarios.contracts import Contract
from lab.scenarios.persona import DEFAULT_PERSONA

FAMILIES = ("correction", "no_confirmation", "tool_timeout", "interruption", "double_confirmation")
_WORDS = re.compile(r"[A-Za-z]+")
_PLACEHOLDER = re.compile(r"\{(verb|Verb|thing|business|tool_name)\}")


class _ActionTemplates(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    families: dict[str, dict[str, Any]]


class Templates(BaseModel):
    """The templates file: per shape of action, the sandbox it plays on and its families."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    about: str = ""
    book: _ActionTemplates
    refund: _ActionTemplates


def generate(toolset: Toolset, templates: Templates) -> list[Contract]:
    """One contract per family for each commit tool, in the tool's words."""
    contracts: list[Contract] = []
    for meaning in toolset.meanings.values():
        if meaning.kind is not Kind.COMMIT:
            continue
        # By the action's shape: a declared cancel takes the book families, a pay the refund's.
        slot = toolset.shape(meaning.action).name == "slot"
        shape = templates.book if slot else templates.refund
        words = words_of(meaning, toolset.file.business)
        for family in FAMILIES:
            body = _acting(_filled(shape.families[family], words), meaning.action)
            data = {
                "id": _identifier(f"{meaning.name}_{family}"),
                "version": 1,
                "tool": shape.tool,
                # Written out for the team to edit: a run whose caller answered an agent's
                # question from a persona the scenario never gave is not held against the agent.
                "persona": DEFAULT_PERSONA.model_dump(),
                **body,
            }
            try:
                contracts.append(Contract.model_validate(data))
            except ValidationError as error:
                raise ValueError(f"template {family} for {meaning.name}: {error}") from None
    return contracts


def words_of(meaning: ToolMeaning, business: str) -> dict[str, str]:
    """What the scenarios say for one tool: its verb and its thing ("reserve", "a table")."""
    parts = [word.lower() for word in _WORDS.findall(meaning.name.replace("_", " "))]
    verb = parts[0] if parts else "do"
    rest = " ".join(parts[1:]) or ("refund" if meaning.action.value == "refund" else "booking")
    article = "an" if rest[0] in "aeiou" else "a"
    return {
        "verb": verb,
        "Verb": verb.capitalize(),
        "thing": f"{article} {rest}",
        "business": business or "your business",
        "tool_name": meaning.name,
    }


def _filled(value: Any, words: dict[str, str]) -> Any:
    if isinstance(value, str):
        return _PLACEHOLDER.sub(lambda match: words[match.group(1)], value)
    if isinstance(value, list):
        return [_filled(item, words) for item in value]
    if isinstance(value, dict):
        return {key: _filled(item, words) for key, item in value.items()}
    return value


def _acting(body: dict[str, Any], action: Action) -> dict[str, Any]:
    """The family's caller lines meaning the tool's own action (cancel, not book)."""
    for line in body.get("caller", []):
        means = line.get("means")
        if isinstance(means, dict) and means.get("action"):
            means["action"] = str(action)
    return body


def _identifier(text: str) -> str:
    cleaned = re.sub(r"[^a-z0-9_]", "_", text.lower()).strip("_")
    return (cleaned if cleaned[:1].isalpha() else f"s_{cleaned}")[:64]
