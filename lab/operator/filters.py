"""The queue's filters, parsed once from a query string; a bad value is named in words.

Pure: pydantic only. The page and the live socket read the same filter, so a card pushed live
appears only on pages whose filters it matches.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lab.audit.schema import SLUG
from lab.grading.schema import Category, Severity
from lab.operator.states import CaseState

# The largest id a database column holds; a bigger cursor is bad input, not an overflow.
MAX_ID = 2**63 - 1
FIELDS = ("severity", "category", "agent", "state", "before")


class BadFilter(ValueError):
    """A query string the queue cannot read; the message names the parameter."""


class QueueFilter(BaseModel):
    """What the operator asked to see; None means any."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    severity: Severity | None = None
    category: Category | None = None
    agent: str | None = Field(default=None, pattern=SLUG)
    state: CaseState | None = None
    # The audit record id of the last card already seen: the next page starts below it.
    before: int | None = Field(default=None, ge=1, le=MAX_ID)

    def matches(self, *, severity: str, category: str, agent: str, state: str) -> bool:
        """Whether a card with these facets belongs on the first page of this filter."""
        return self.before is None and all(
            wanted is None or wanted == value
            for wanted, value in (
                (self.severity, severity),
                (self.category, category),
                (self.agent, agent),
                (self.state, state),
            )
        )

    def query(self, **changes: object) -> dict[str, str]:
        """The filter as query parameters (unset ones left out), with some changed."""
        values = {**self.model_dump(mode="json"), **changes}
        return {name: str(value) for name, value in values.items() if value is not None}


def parse_filter(query: Mapping[str, Sequence[str]]) -> QueueFilter:
    """The filter a query string asks for; empty values mean any, unknown names are refused."""
    unknown = sorted(set(query) - set(FIELDS))
    if unknown:
        raise BadFilter(f"unknown filter {unknown[0]!r}; the queue filters by {', '.join(FIELDS)}")
    values: dict[str, str] = {}
    for name, given in query.items():
        if len(given) > 1:
            raise BadFilter(f"{name} is given {len(given)} times; give it once")
        if given and given[0].strip():
            values[name] = given[0].strip()
    try:
        return QueueFilter.model_validate(values)
    except ValidationError as error:
        raise BadFilter(_problem(error)) from None


def _problem(error: ValidationError) -> str:
    first = error.errors()[0]
    name = str(first["loc"][0])
    shown = str(first["input"])[:40]
    choices = {
        "severity": [s.value for s in Severity],
        "category": [c.value for c in Category],
        "state": [s.value for s in CaseState],
    }
    if name in choices:
        return f"{name} {shown!r} is not one of {', '.join(choices[name])}"
    if name == "agent":
        return f"agent {shown!r} is not an agent slug (lowercase letters, digits, - and _)"
    return f"before {shown!r} is not a record id (a whole number from 1)"
