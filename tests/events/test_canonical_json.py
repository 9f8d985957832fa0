from __future__ import annotations

import pytest
import rfc8785
from hypothesis import given
from hypothesis import strategies as st

from lab.events.chain import canonical_json

SAFE = 2**53 - 1
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**60), max_value=2**60)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text()
    | st.sampled_from(["10:00:00.5", ":1.5,", "[1e+16]", "\u00e9", "\U0001f600", "\ue000"])
)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


def reference(value) -> bytes | type[Exception]:
    try:
        return rfc8785.dumps(value)
    except rfc8785.CanonicalizationError:
        return rfc8785.CanonicalizationError


def ours(value) -> bytes | type[Exception]:
    try:
        return canonical_json(value)
    except rfc8785.CanonicalizationError:
        return rfc8785.CanonicalizationError


@given(values)
def test_the_fast_encoder_writes_exactly_what_rfc8785_writes(value):
    assert ours(value) == reference(value)


@pytest.mark.parametrize(
    "value",
    [
        {"\U0001f600": 1, "\ue000": 2},  # UTF-16 order differs from code point order
        {"n": SAFE},
        {"n": SAFE + 1},
        {"x": 1.0},
        {"x": 1e21},
        ['\x00\x1f\x7f"\\/'],
        "\ud800",
    ],
)
def test_the_fast_encoder_matches_rfc8785_on_its_edge_cases(value):
    assert ours(value) == reference(value)


def test_an_ascii_report_body_takes_the_fast_path(monkeypatch):
    def refuse(value):
        raise AssertionError("the reference encoder was used")

    expected = rfc8785.dumps(
        event := {"at": "2025-03-04T10:00:00.250000Z", "seq": 12, "payload": {"args": {"n": 4512}}}
    )
    monkeypatch.setattr(rfc8785, "dumps", refuse)
    assert canonical_json(event) == expected
