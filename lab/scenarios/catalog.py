"""Loads the canonical contracts from the scenarios/ folder.

A contract file may include the lab's invariants by reference ("include": ["invariants"]):
they are written once, in scenarios/_invariants.json, and resolved here into the contract's
assertions (as required=False), so the contract a run records and a report embeds is whole.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lab.scenarios.contracts import Assertion, Contract

SCENARIO_DIR = Path(__file__).resolve().parent.parent.parent / "scenarios"
INVARIANTS_FILE = SCENARIO_DIR / "_invariants.json"
FREE_CALL_ID = "free"
SCENARIO_DIRS_ENV = "LAB_SCENARIO_DIRS"


class UnknownScenario(LookupError):
    def __init__(self, scenario_id: str) -> None:
        known = ", ".join(sorted(known_contracts()))
        super().__init__(f"unknown scenario {scenario_id!r}; known scenarios: {known}")
        self.scenario_id = scenario_id


class _Invariants(BaseModel):
    """The assertions that hold in every scenario, written once."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    invariants: list[Assertion] = Field(min_length=1)


class _Includes(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    include: list[Literal["invariants"]] = Field(default_factory=list)


@cache
def invariants() -> tuple[Assertion, ...]:
    """The lab's general invariants, each marked as holding wherever it is exercised."""
    loaded = _Invariants.model_validate_json(INVARIANTS_FILE.read_text())
    return tuple(item.model_copy(update={"required": False}) for item in loaded.invariants)


def contract_from_file(path: Path) -> Contract:
    """One contract file, its includes resolved; errors name the file."""
    try:
        data: dict[str, Any] = json.loads(path.read_text())
        includes = _Includes.model_validate(data).include
        data.pop("include", None)
        if "invariants" in includes:
            own = data.get("assertions", [])
            data["assertions"] = [*own, *(a.model_dump(mode="json") for a in invariants())]
        contract = Contract.model_validate(data)
    except (ValueError, ValidationError) as error:
        raise ValueError(f"{path.name}: {error}") from None
    if contract.id != path.stem:
        raise ValueError(f"{path.name} holds contract id {contract.id!r}; the names must match")
    return contract


@cache
def canonical_contracts() -> dict[str, Contract]:
    """Every contract this lab vouches for: the scripted scenarios and the free call."""
    paths = sorted(p for p in SCENARIO_DIR.glob("*.json") if not p.name.startswith("_"))
    return {contract.id: contract for contract in map(contract_from_file, paths)}


def team_contracts() -> dict[str, Contract]:
    """Scenarios a team wrote in its own words (or generated with maketemplates), from the
    folders LAB_SCENARIO_DIRS names (separated by ':')."""
    return _team_contracts(os.environ.get(SCENARIO_DIRS_ENV, ""))


@cache
def _team_contracts(folders: str) -> dict[str, Contract]:
    found: dict[str, Contract] = {}
    for folder in filter(None, folders.split(os.pathsep)):
        paths = sorted(Path(folder).glob("*.json"))
        for contract in map(contract_from_file, paths):
            if contract.id in canonical_contracts() or contract.id in found:
                raise ValueError(f"{folder}: scenario id {contract.id!r} is already taken")
            found[contract.id] = contract
    return found


def known_contracts() -> dict[str, Contract]:
    """The lab's own contracts and the team's."""
    return {**canonical_contracts(), **team_contracts()}


def all_contracts() -> dict[str, Contract]:
    """The scenarios: every known contract that a scripted caller plays."""
    return {key: contract for key, contract in known_contracts().items() if contract.scripted}


def free_contract() -> Contract:
    """The free call: no script, both tools, judged by the lab's invariants."""
    return contract_get(FREE_CALL_ID)


def contract_get(scenario_id: str) -> Contract:
    try:
        return known_contracts()[scenario_id]
    except KeyError:
        raise UnknownScenario(scenario_id) from None
