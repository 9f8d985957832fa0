"""A contract's phone line: bad impairment values are refused with a clear error, and a contract
without one keeps its canonical form (so its hash)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from lab.scenarios.catalog import contract_get
from lab.scenarios.contracts import Contract


def with_line(*impairments: dict[str, Any], seed: int = 7) -> dict[str, Any]:
    data = contract_get("correction").model_dump(mode="json")
    data["line"] = {"seed": seed, "impairments": list(impairments)}
    return data


def refusal(data: dict[str, Any]) -> str:
    with pytest.raises(ValidationError) as caught:
        Contract.model_validate(data)
    return str(caught.value)


@pytest.mark.parametrize(
    ("impairment", "says"),
    [
        ({"kind": "packet_loss", "rate": 0}, "greater than 0"),
        ({"kind": "packet_loss", "rate": 0.9}, "less than or equal to 0.5"),
        ({"kind": "packet_loss", "rate": 0.1, "burst_frames": 0.5}, "greater than or equal to 1"),
        ({"kind": "jitter", "rate": 0.1, "max_late_ms": 50}, "multiple of 20"),
        ({"kind": "jitter", "rate": 0.1, "max_late_ms": 0}, "greater than or equal to 20"),
        ({"kind": "noise", "snr_db": 90}, "less than or equal to 60"),
        ({"kind": "noise", "snr_db": 10, "color": "brown"}, "'white' or 'pink'"),
        ({"kind": "clipping", "level": 0}, "greater than 0"),
        ({"kind": "clipping", "level": 1.5}, "less than or equal to 1"),
        ({"kind": "clipping", "level": 0.5, "gain_db": -3}, "greater than or equal to 0"),
        ({"kind": "silence", "ms": 50}, "greater than or equal to 100"),
        ({"kind": "keypad", "digits": "12x"}, "no keypad key 'x'"),
        ({"kind": "keypad", "digits": ""}, "at least 1 character"),
        ({"kind": "static"}, "does not match any of the expected tags"),
        ({"kind": "telephone_band", "bandwidth": 4000}, "Extra inputs are not permitted"),
        ({"kind": "telephone_band", "lines": []}, "each caller line once"),
        ({"kind": "telephone_band", "lines": [1, 1]}, "each caller line once"),
        ({"kind": "telephone_band", "lines": [-1]}, "each caller line once"),
    ],
)
def test_a_bad_impairment_value_is_refused_saying_what_is_wrong(
    impairment: dict[str, Any], says: str
) -> None:
    assert says in refusal(with_line(impairment))


def test_a_line_names_only_lines_the_script_has() -> None:
    assert "the script has lines 0 to 2" in refusal(
        with_line({"kind": "silence", "ms": 1000, "lines": [3]})
    )


def test_a_line_lists_each_kind_once_and_at_least_one() -> None:
    twice = with_line({"kind": "noise", "snr_db": 10}, {"kind": "noise", "snr_db": 20})
    assert "each kind of impairment once" in refusal(twice)
    assert "at least 1 item" in refusal(with_line())


def test_the_seed_is_a_32_bit_number() -> None:
    assert "greater than or equal to 0" in refusal(with_line({"kind": "telephone_band"}, seed=-1))
    assert "less than or equal to" in refusal(with_line({"kind": "telephone_band"}, seed=2**40))


def test_a_free_call_has_no_scripted_caller_to_impair() -> None:
    data = with_line({"kind": "telephone_band"})
    data["caller"] = []
    assert "this contract has none" in refusal(data)


def test_a_contract_without_a_line_leaves_it_out_of_its_canonical_form() -> None:
    plain = contract_get("correction")
    assert "line" not in plain.model_dump(mode="json")
    lined = Contract.model_validate(with_line({"kind": "telephone_band"}))
    assert lined.model_dump(mode="json")["line"] == {
        "seed": 7,
        "impairments": [{"kind": "telephone_band", "lines": None}],
    }
    assert lined.contract_hash != plain.contract_hash


def test_a_line_applies_its_impairments_in_the_chain_order_to_the_lines_it_names() -> None:
    lined = Contract.model_validate(
        with_line(
            {"kind": "jitter", "rate": 0.1, "max_late_ms": 100},
            {"kind": "telephone_band"},
            {"kind": "silence", "ms": 2000, "lines": [1]},
        )
    )
    assert lined.line is not None
    assert [i.kind for i in lined.line.on(0)] == ["telephone_band", "jitter"]
    assert [i.kind for i in lined.line.on(1)] == ["silence", "telephone_band", "jitter"]


def test_the_impaired_scenarios_record_their_line_in_the_contract() -> None:
    lossy, noisy = contract_get("lossy_correction"), contract_get("noisy_confirmation")
    assert lossy.line is not None and noisy.line is not None
    assert {i.kind for i in lossy.line.impairments} >= {"telephone_band", "packet_loss"}
    assert "noise" in {i.kind for i in noisy.line.impairments}
    assert lossy.model_dump(mode="json")["line"]["seed"] == lossy.line.seed
