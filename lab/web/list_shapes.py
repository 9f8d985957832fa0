"""What /grade/ shows of the constraint list's shape: the example lists in fixtures/ (each
downloadable), the seed's shorter shape, and for a refused list the accepted form of the field
the error names."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from lab.facts.errors import ConstraintListError
from lab.facts.loader import FIXTURES, constraints_from_bytes

# Files in fixtures/ larger than this are not offered as examples (none of the lists is).
MAX_EXAMPLE_BYTES = 256 * 1024
DEMO_EXAMPLE = "tenant-demo.v1.json"
# The per-turn grader seed's list shape, complete: every key it accepts.
SEED_EXAMPLE: dict[str, Any] = {
    "business": "Harbor Auto Detailing",
    "price_list": [
        {"id": "px_basic", "service": "basic detail", "price_usd": 149},
        {"id": "px_premium", "service": "premium detail", "price_usd": 249},
    ],
    "hours": {"mon_fri": "08:00-18:00", "sat": "09:00-15:00", "sun": "closed"},
    "policies": {
        "refund": "no_cash_refunds_store_credit_only",
        "reschedule": "free_up_to_24h_before",
    },
    "capabilities": ["book_appointment", "reschedule", "answer_pricing"],
    "promotions": [{"description": "10% off a premium detail on weekdays", "percent_off": 10}],
}
_FIELD = re.compile(r"^[A-Za-z_]+")


@dataclass(frozen=True)
class ExampleList:
    """A constraint list in fixtures/ that loads, offered as a file to start from."""

    filename: str
    business: str
    version: str


@cache
def example_lists() -> tuple[ExampleList, ...]:
    """Every file in fixtures/ that is a valid constraint list, by name (read once)."""
    found = []
    for path in sorted(FIXTURES.glob("*.json")):
        raw = path.read_bytes()
        if len(raw) > MAX_EXAMPLE_BYTES:
            continue
        try:
            facts = constraints_from_bytes(raw)
        except ConstraintListError:
            continue  # calendar.json, ledger.json: fixtures, not lists
        found.append(ExampleList(path.name, facts.business, facts.version))
    return tuple(found)


def example_bytes(filename: str) -> bytes | None:
    """The file of an example list; None for any name that is not one (no path is built)."""
    if not any(example.filename == filename for example in example_lists()):
        return None
    return (FIXTURES / filename).read_bytes()


@cache
def lab_shape() -> str:
    """The demo list, pretty-printed: the lab's format with every field filled in."""
    return json.dumps(json.loads((FIXTURES / DEMO_EXAMPLE).read_text()), indent=2)


def seed_shape() -> str:
    return json.dumps(SEED_EXAMPLE, indent=2)


def field_example(path: str) -> tuple[str, str] | None:
    """For an error at `path` ("hours.saturday.opens"), its top-level field and an accepted
    value of it from the examples; None where the field is in neither."""
    found = _FIELD.match(path)
    if found is None:
        return None
    field = found.group(0)
    lab = json.loads((FIXTURES / DEMO_EXAMPLE).read_text())
    for source in (lab, SEED_EXAMPLE):
        if field in source:
            value = source[field]
            # A list's first entry shows the shape of every entry.
            shown = value[:1] if isinstance(value, list) else value
            return field, json.dumps({field: shown}, indent=2)
    return None
