"""The constraints a flag names, in words, from the list version the turn was graded against."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from lab.audit.importing import constraints_for_tenant
from lab.facts.errors import ConstraintListError
from lab.facts.knowledge import build_knowledge_base


@dataclass(frozen=True)
class ConstraintView:
    ref: str
    # None when the lab lacks that list (an uploaded one) or the list names no such ref.
    text: str | None


@lru_cache(maxsize=32)
def _texts(tenant: str, version: str, digest: str) -> dict[str, str]:
    """Each constraint ref of one list version and the knowledge-base text that states it."""
    try:
        constraints = constraints_for_tenant(tenant, version)
    except ConstraintListError:
        return {}
    # Same name, other content: a list graded elsewhere; its words are not ours to show.
    if constraints.digest() != digest:
        return {}
    texts: dict[str, str] = {}
    for chunk in build_knowledge_base(constraints).chunks:
        for ref in chunk.constraint_refs:
            texts.setdefault(ref, chunk.text)
    return texts


def constraint_views(
    *, tenant: str, version: str, digest: str, refs: list[str]
) -> list[ConstraintView]:
    """The refs a grade names, each with what that version of the list says."""
    texts = _texts(tenant, version, digest)
    return [ConstraintView(ref, texts.get(ref)) for ref in refs]
