"""The session's side of retrieval: the tenant's knowledge base, indexed once per list version."""

from __future__ import annotations

from functools import cache

from lab.facts.knowledge import build_knowledge_base
from lab.facts.loader import load_tenant
from lab.facts.schema import ConstraintList
from lab.retrieval.bm25 import Bm25Retriever

DEFAULT_TENANT = "demo"


@cache
def tenant_constraints(tenant: str = DEFAULT_TENANT) -> ConstraintList:
    """The newest constraint list of a tenant, read once from fixtures/."""
    return load_tenant(tenant)


@cache
def tenant_retriever(tenant: str = DEFAULT_TENANT) -> Bm25Retriever:
    """BM25 over the knowledge base derived from the tenant's constraint list."""
    return Bm25Retriever(build_knowledge_base(tenant_constraints(tenant)))
