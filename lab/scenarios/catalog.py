"""Loads the canonical contracts from the scenarios/ folder."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from lab.scenarios.contracts import Contract

SCENARIO_DIR = Path(__file__).resolve().parent.parent.parent / "scenarios"


class UnknownScenario(LookupError):
    def __init__(self, scenario_id: str) -> None:
        known = ", ".join(sorted(all_contracts()))
        super().__init__(f"unknown scenario {scenario_id!r}; known scenarios: {known}")
        self.scenario_id = scenario_id


@cache
def all_contracts() -> dict[str, Contract]:
    contracts = {}
    for path in sorted(SCENARIO_DIR.glob("*.json")):
        contract = Contract.model_validate_json(path.read_text())
        if contract.id != path.stem:
            raise ValueError(f"{path.name} holds contract id {contract.id!r}; the names must match")
        contracts[contract.id] = contract
    return contracts


def contract_get(scenario_id: str) -> Contract:
    try:
        return all_contracts()[scenario_id]
    except KeyError:
        raise UnknownScenario(scenario_id) from None
