from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, note, settings
from hypothesis import strategies as st

from lab.reports.keys import lab_public_key
from lab.reports.verification import verify_report
from lab.scenarios.catalog import all_contracts

pytestmark = pytest.mark.django_db

Path = tuple[str | int, ...]
leaf_values = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63)
    | st.text(max_size=20)
    | st.sampled_from(["PASS", "FAIL", "supported", "contradicted", "ev-00001", "0" * 64])
)


def _nodes(value: Any, path: Path = ()) -> list[tuple[Path, Any]]:
    found = [(path, value)]
    if isinstance(value, dict | list):
        children = value.items() if isinstance(value, dict) else enumerate(value)
        for key, child in children:
            found += _nodes(child, (*path, key))
    return found


def _parent(document: Any, path: Path) -> Any:
    for key in path[:-1]:
        document = document[key]
    return document


def mutate(data: st.DataObject, document: dict[str, Any]) -> str:
    """Alter one leaf, delete one key or reorder one list of document; says which."""
    nodes = _nodes(document)
    operation = data.draw(st.sampled_from(["alter", "delete", "reorder"]), label="operation")
    if operation == "alter":
        leaves = [(p, v) for p, v in nodes if not isinstance(v, dict | list)]
        path, old = data.draw(st.sampled_from(leaves), label="leaf")
        new = data.draw(leaf_values, label="new value")
        assume(json.dumps(new) != json.dumps(old))
        _parent(document, path)[path[-1]] = new
    elif operation == "delete":
        # Stripping the whole signature is allowed: the report then verifies as unsigned
        # (test_verification covers it), which is not the same as verifying as signed.
        keys = [p for p, _ in nodes if p and isinstance(p[-1], str) and p != ("signature",)]
        path = data.draw(st.sampled_from(keys), label="key")
        del _parent(document, path)[path[-1]]
    else:
        lists = [(p, v) for p, v in nodes if isinstance(v, list) and len(set(map(repr, v))) > 1]
        path, items = data.draw(st.sampled_from(lists), label="list")
        order = data.draw(st.permutations(items), label="order")
        assume(order != items)
        _parent(document, path)[path[-1]] = order
    return f"{operation} at {path}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_no_random_mutation_of_a_real_report_verifies_as_consistent(guarded_document, data):
    document = copy.deepcopy(guarded_document)
    note(mutate(data, document))
    raw = json.dumps(document).encode()
    verification = verify_report(raw, contracts=all_contracts(), lab_key=lab_public_key())
    assert not verification.consistent, verification.summary("mutated.json")


@pytest.fixture(scope="module")
def guarded_document(guarded) -> dict[str, Any]:
    return guarded.document()
