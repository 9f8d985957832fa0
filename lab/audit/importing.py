"""What `gradeturns` and the upload page share: choosing the facts, then grading a transcript.

The edge around lab.audit.imported: it reads the fixtures and the clock. Bad input raises
TranscriptError (with the line) or ConstraintListError (with the path), never anything vaguer.
"""

from __future__ import annotations

import re
import time

from django.utils import timezone

from lab.audit.imported import grade_transcript
from lab.audit.schema import SLUG, AuditEntry
from lab.audit.transcript import parse_transcript
from lab.facts.errors import ConstraintListError
from lab.facts.loader import constraints_from_bytes, load_tenant
from lab.facts.schema import ConstraintList
from lab.grading.grader import DeterministicGrader

MAX_CONSTRAINTS_BYTES = 1024 * 1024
DEFAULT_AGENT = "imported"
_VERSION = re.compile(r"(?:(?P<tenant>[a-z][a-z0-9_-]*)_)?v?(?P<number>\d{1,6})")


class BadAgent(ValueError):
    pass


def constraints_for_tenant(tenant: str, version: str | None = None) -> ConstraintList:
    """A tenant's list from fixtures/: the newest, or version given as 3, v3 or demo_v3."""
    if not re.fullmatch(SLUG, tenant):
        raise ConstraintListError("tenant", f"not a tenant name: {tenant!r}")
    if version is None or not version.strip():
        return load_tenant(tenant)
    match = _VERSION.fullmatch(version.strip())
    if match is None or match["tenant"] not in (None, tenant):
        raise ConstraintListError(
            "version", f"expected a number or {tenant}_vN, got {version.strip()[:40]!r}"
        )
    return load_tenant(tenant, int(match["number"]))


def constraints_upload(raw: bytes) -> ConstraintList:
    """A list given as a file, in the seed's shape or the lab's versioned format."""
    if len(raw) > MAX_CONSTRAINTS_BYTES:
        raise ConstraintListError(
            "(the list)", f"the file is over the limit of {MAX_CONSTRAINTS_BYTES:,} bytes"
        )
    return constraints_from_bytes(raw)


def agent_slug(text: str | None) -> str:
    """The agent the imported turns are recorded under; DEFAULT_AGENT when none is named."""
    agent = (text or "").strip() or DEFAULT_AGENT
    if not re.fullmatch(SLUG, agent):
        raise BadAgent(
            f"not an agent slug: {agent[:40]!r} (lowercase letters, digits, - and _, "
            "starting with a letter)"
        )
    return agent


def tenant_slug(text: str) -> str:
    """The tenant records are stored in, as named by the operator (never by a file)."""
    if not re.fullmatch(SLUG, text):
        raise ConstraintListError("tenant", f"not a tenant name: {text[:40]!r}")
    return text


def transcript_grade(
    raw: bytes, *, constraints: ConstraintList, tenant: str, agent: str, max_bytes: int
) -> list[AuditEntry]:
    """Every agent turn of a JSONL transcript graded now by the deterministic grader."""
    turns = parse_transcript(raw, max_bytes=max_bytes)
    return grade_transcript(
        turns,
        constraints=constraints,
        tenant=tenant,
        agent=agent,
        grader=DeterministicGrader(),
        graded_at=timezone.now(),
        timer=time.perf_counter,
    )
