"""Contracts: the invariants written once and included by reference; old hashes unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lab.scenarios.catalog import (
    all_contracts,
    canonical_contracts,
    contract_from_file,
    free_contract,
    invariants,
)
from lab.scenarios.contracts import AssertionKind, Contract

# The hashes runs and reports recorded (the first nine before the free call existed): they must
# not move.
HASHES = {
    "backchannel_readback": "2cea38a2223c930f21cbddb1cd6cefc48e57512d9ccc73ca2ef545dc0cded8a9",
    "correction": "fe2acbea357194deb6faaa5faa1c586f22de035317eef66c0c983d23f9aa281e",
    "facts_before_booking": "35e5e919390aa65b3de1f0c14402c64ee97a5761e81167e8cfe1250e94d93932",
    "double_confirmation": "ccc9aadac8b501b7fdc8c54d8c1e75439e1595f85c31bef9f3e3f7d0b7c52192",
    "interruption": "4ba8b777512404b8e0f82f10034cf384a9e11342395f189616c0148da9b8f82e",
    "lossy_correction": "c13868369224310ce640c0726f6c090ed87c6bdf0909cbf7e9a7bf3c80b3ae5a",
    "no_confirmation": "bec6ebc354803c5fc95bed41bcf12edfba628424909814d73684c1c8495cdaf7",
    "noisy_confirmation": "d78c78c217137e9afa1091b57a580193dd6508b3cfd44ee0b9edbe4a469116d3",
    "refund_correction": "da52cb5d7358badd3d7b3141ab14417ec083bcbf58a3cf28d1c7bb687239b9cd",
    "tool_timeout": "25fe35c9beb8f40d33bf84515380f662ac3866435a19c2f1a4fb4e0007af9757",
    "uncovered_question": "accba3f061423b9a0366b192a9aa6125870f4aefcc5c1fe2868098ebe8959910",
}


def test_every_scripted_contract_keeps_the_hash_it_had() -> None:
    assert {key: c.contract_hash for key, c in all_contracts().items()} == HASHES


def test_the_free_call_is_canonical_but_no_scripted_scenario() -> None:
    assert "free" in canonical_contracts()
    assert "free" not in all_contracts()
    free = free_contract()
    assert free.tools == ("calendar", "ledger")
    assert not free.caller


def test_the_free_call_is_judged_by_exactly_the_lab_invariants() -> None:
    free = free_contract()
    assert free.assertions == list(invariants())
    assert all(not assertion.required for assertion in free.assertions)
    kinds = {assertion.kind for assertion in free.assertions}
    assert {
        AssertionKind.COMMIT_USES_LATEST_REVISION,
        AssertionKind.COMMIT_CONFIRMED_EXPLICITLY,
        AssertionKind.SINGLE_EXECUTION,
        AssertionKind.NO_INVENTED_RESULT,
        AssertionKind.INTERRUPTION_EXPIRES_PROPOSAL,
    } <= kinds


def test_a_resolved_contract_is_whole_so_a_report_can_embed_it(tmp_path: Path) -> None:
    free = free_contract()
    dumped = free.model_dump(mode="json")
    assert "include" not in dumped
    assert Contract.model_validate(dumped).contract_hash == free.contract_hash
    assert all(item["required"] is False for item in dumped["assertions"])


def test_an_unknown_include_is_refused_with_the_file_name(tmp_path: Path) -> None:
    data = json.loads(Path("scenarios/free.json").read_text()) | {"include": ["everything"]}
    path = tmp_path / "free.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"free\.json"):
        contract_from_file(path)


def test_a_list_of_tools_names_each_tool_once() -> None:
    data = free_contract().model_dump(mode="json") | {"tool": ["calendar", "calendar"]}
    with pytest.raises(ValueError, match="each tool once"):
        Contract.model_validate(data)
