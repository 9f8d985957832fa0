from __future__ import annotations

import json
import time

import pytest

from lab.reports.structure import MAX_DEPTH, MAX_REPORT_BYTES, Parsed, nesting_depth, report_parse
from lab.reports.verification import Check, Status, verify_report
from lab.scenarios.catalog import all_contracts

pytestmark = pytest.mark.django_db


def refusal(raw: bytes) -> tuple[str, str]:
    """The kind and reason of the first finding that refuses raw."""
    parsed = report_parse(raw)
    assert not isinstance(parsed, Parsed), "expected the file to be refused"
    return parsed[0].kind, parsed[0].reason


@pytest.mark.parametrize(
    ("raw", "kind", "says"),
    [
        (b"", "not_json", "the file is empty"),
        (b"this is not json", "not_json", "not valid JSON at line 1, column 1"),
        (b'{"schema_version": 1, "run_id": "r', "truncated", "the JSON ends early"),
        (b"\xff\xfe{}", "not_utf8", "not UTF-8 text"),
        ('\ufeff{"schema_version": 1}'.encode(), "not_json", "byte-order mark"),
        (b"[1, 2, 3]", "not_a_report", "the top level is an array, not an object"),
        (b'{"events": []}', "not_a_report", "there is no schema_version"),
        (b'{"schema_version": 2}', "unknown_schema_version", "schema_version 2 is unknown"),
        (b'{"schema_version": "1"}', "unknown_schema_version", 'schema_version "1" is unknown'),
        (b'{"schema_version": 1, "a": NaN}', "not_json", "NaN is not a JSON number"),
        (b'{"schema_version": 1, "a": 1, "a": 2}', "duplicate_key", "the key 'a' appears twice"),
    ],
)
def test_it_refuses_what_is_not_a_report_and_names_the_problem(raw, kind, says):
    found_kind, reason = refusal(raw)
    assert found_kind == kind
    assert says in reason


def test_it_refuses_a_file_over_the_size_limit_before_parsing_it():
    kind, reason = refusal(b" " * (MAX_REPORT_BYTES + 1))
    assert kind == "too_large"
    assert f"{MAX_REPORT_BYTES:,}-byte limit" in reason


def test_it_refuses_deep_nesting_before_parsing_it():
    raw = b'{"schema_version": 1, "x": ' + b"[" * 5_000_000 + b"]" * 5_000_000 + b"}"
    started = time.perf_counter()
    kind, reason = refusal(raw)
    assert kind == "too_deep"
    assert "nest 5,000,001 deep" in reason
    assert time.perf_counter() - started < 5


def test_nesting_depth_ignores_brackets_inside_strings():
    assert nesting_depth(b'{"a": "[[[{{{\\"]]]", "b": [[1]]}') == 3
    assert nesting_depth(b'"\\\\"[[]]') == 2
    assert nesting_depth(b"") == 0


def test_a_nesting_depth_just_within_the_limit_is_read_as_json():
    value = json.loads("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    raw = json.dumps({"schema_version": 1, "x": value[0]}).encode()
    assert refusal(raw)[0] == "schema"


def test_wrong_types_are_schema_errors_with_the_path_and_the_reason(guarded):
    document = guarded.document()
    document["events"][2]["seq"] = "3"
    document["evaluation"]["verdict"] = "MAYBE"
    del document["contract"]["title"]
    parsed = report_parse(json.dumps(document).encode())
    assert not isinstance(parsed, Parsed)
    reasons = [f.reason for f in parsed]
    assert "events[2].seq: Input should be a valid integer" in reasons
    assert any(r.startswith("evaluation.verdict: Input should be 'PASS'") for r in reasons)
    assert "contract.title: Field required" in reasons


def test_an_unknown_member_is_a_schema_error(guarded):
    document = guarded.document()
    document["trust_me"] = True
    parsed = report_parse(json.dumps(document).encode())
    assert not isinstance(parsed, Parsed)
    assert [f.reason for f in parsed] == ["trust_me: Extra inputs are not permitted"]


def test_a_refused_file_runs_no_further_check():
    verification = verify_report(b"{", contracts=all_contracts(), lab_key=None)
    assert verification.rejected
    assert verification.check(Check.STRUCTURE).status is Status.FAILED
    assert [c.status for c in verification.checks[1:]] == [Status.NOT_RUN] * 5
    assert verification.verdict is None
    assert verification.summary("x.json").startswith("x.json: REJECTED (structure: the JSON ends")
