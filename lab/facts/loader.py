"""Reading constraint lists: the lab's versioned files in fixtures/ and lists in the seed's shape.

The only module of lab.facts that touches files; a bad list is refused with the path of the error.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lab.facts.errors import ConstraintListError, error_from_validation
from lab.facts.schema import ConstraintList
from lab.facts.seed import from_seed, is_seed_shape

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
_TENANT_FILE = re.compile(r"tenant-(?P<tenant>[a-z][a-z0-9_-]*)\.v(?P<number>\d+)\.json")


def parse_constraints(data: Any) -> ConstraintList:
    """A constraint list from parsed JSON, in the lab's format or the seed's."""
    if not isinstance(data, dict):
        raise ConstraintListError("(the list)", "expected a JSON object")
    if is_seed_shape(data):
        return from_seed(data)
    try:
        return ConstraintList.model_validate(data)
    except ValidationError as error:
        raise error_from_validation(error) from None


def load_constraints(path: Path) -> ConstraintList:
    """Read and validate one constraint-list file."""
    return constraints_from_bytes(path.read_bytes())


def constraints_from_bytes(raw: bytes) -> ConstraintList:
    """Validate a constraint list given as the bytes of its JSON (a file or an upload)."""
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as error:
        raise ConstraintListError("(the list)", f"not UTF-8 (byte {error.start + 1})") from None
    except RecursionError:
        raise ConstraintListError("(the list)", "nested too deeply to be a list") from None
    except json.JSONDecodeError as error:
        raise ConstraintListError(
            f"line {error.lineno} column {error.colno}", f"not JSON: {error.msg}"
        ) from None
    return parse_constraints(data)


def tenants(directory: Path = FIXTURES) -> list[str]:
    """Every tenant with at least one list in directory, by name."""
    names = (_TENANT_FILE.fullmatch(path.name) for path in directory.glob("tenant-*.json"))
    return sorted({match["tenant"] for match in names if match})


def tenant_versions(tenant: str, directory: Path = FIXTURES) -> list[int]:
    """The version numbers of a tenant's lists in directory, oldest first."""
    numbers = []
    for path in directory.glob(f"tenant-{tenant}.v*.json"):
        match = _TENANT_FILE.fullmatch(path.name)
        if match and match["tenant"] == tenant:
            numbers.append(int(match["number"]))
    return sorted(numbers)


def load_tenant(
    tenant: str, version: int | None = None, directory: Path = FIXTURES
) -> ConstraintList:
    """A tenant's list by version number (the newest when None) from tenant-T.vN.json files."""
    versions = tenant_versions(tenant, directory)
    if not versions:
        raise ConstraintListError("(the list)", f"no constraint list for tenant {tenant!r}")
    number = versions[-1] if version is None else version
    if number not in versions:
        raise ConstraintListError(
            "version", f"tenant {tenant!r} has no version {number}; it has versions {versions}"
        )
    loaded = load_constraints(directory / f"tenant-{tenant}.v{number}.json")
    # A file is named for the list it holds; a mismatch means someone edited a version in place.
    expected = f"{tenant}_v{number}"
    if (loaded.tenant, loaded.version) != (tenant, expected):
        raise ConstraintListError(
            "version", f"file tenant-{tenant}.v{number}.json holds {loaded.version!r}"
        )
    return loaded
