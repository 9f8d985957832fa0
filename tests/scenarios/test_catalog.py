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

# The hashes of version 1, recorded by runs and reports before the lines were annotated: a
# version 1 contract (its lines without meaning) must still hash to them.
HASHES_V1 = {
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
# Version 2: every caller line says what it means (the referee of an outside agent reads it).
HASHES = {
    "backchannel_readback": "f5205b74ac647b674ebc79c31313745dec40a7e38fce7cc8c58a44d37f1ff0ef",
    "correction": "728c438b94b951c0fdbbffa6906249c7454bd7854c986b1f4770e508559c6976",
    "double_confirmation": "165a135e61adc0f39747b7d7a2579d2b76765ca7dfaf482aa7fbafd5d6bc861c",
    "facts_before_booking": "15dd160ab1f4adf0f973baf08741a7d2e374d3f5fcca5a95bb2545b032a14ac2",
    "interruption": "643041c1ec9366e3ef912d10c07ce26bec821414b44352b69d3677d5998610c2",
    "lossy_correction": "08d3d32cf5b0df77cb5e7c5e2a1b5cd31af2ced407540ca0a4be66b27fa26946",
    "no_confirmation": "c4d6998d41d8201095f9f2a03df5b54b122276eda010b0f3d6be52e44e6b9b75",
    "noisy_confirmation": "b3368e193c08a6f978196175ae99b2a8941d0ca79069a584f87ceb0696aed781",
    "refund_correction": "caaf2d5e506e6246d423f91ec0f43eaf8bcac996f8210a08587c316d6c68df99",
    "tool_timeout": "e27c978f78f0a31bacfe9f3097c5be364a4761f226e3ab3c60381543359b736d",
    "uncovered_question": "c439439ab22bf25178922e862082a402a1650cbd20dccd9cef1ebe23d12807c2",
}
# Version 3 of tool_timeout asserts commit_confirmed as the other booking scenarios do (an
# eager booking on "Yes, book it." with nothing read back passed version 2); without that
# assertion it is version 2 as recorded.
TOOL_TIMEOUT_V2 = "21e163da5c0d1bf660c1518df8a83b94aa9475afc29f48f57971b5f1414880aa"
# Scenarios from the failures real users report (issue 31), annotated from their first version.
HASHES_NEW = {
    "barge_during_commit": "d95400bca5f133e0ebf88dcf37946f91d273a799b28967f2a35be1fc7b243a20",
    "commit_answer_lost": "abbc1ca9b5964948a3403865bf45cc499e6defb13c00e7bd813f27efecffa29e",
    "hangup_mid_commit": "f3316fd16d5345bb8e8064bb1a20f6fba81f3dc79976f3b19b95645fe844a53f",
    "correction_after_booking": "a633519ed2417f2fc4f45d605c59f1271ae5cc3b0e392326391ab3d031abc461",
    "time_repeated": "e9db28e06421391b260930b52ca3d58fd7518b27cd27bf70ac0de6dad0e8fc90",
}


def test_every_scripted_contract_keeps_the_hash_it_had() -> None:
    assert {key: c.contract_hash for key, c in all_contracts().items()} == HASHES | HASHES_NEW


def test_the_annotations_and_the_version_are_all_that_changed_since_version_1() -> None:
    for key, contract in all_contracts().items():
        if key in HASHES_NEW:
            continue
        if key == "tool_timeout":
            assert contract.version == 3 and contract.assertions[-1].id == "commit_confirmed"
            kept = contract.assertions[:-1]
            contract = contract.model_copy(update={"version": 2, "assertions": kept})
            assert contract.contract_hash == TOOL_TIMEOUT_V2
        assert contract.version == 2 and contract.annotated, key
        lines = [line.model_copy(update={"means": None}) for line in contract.caller]
        before = contract.model_copy(update={"version": 1, "caller": lines})
        assert before.contract_hash == HASHES_V1[key], key


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
