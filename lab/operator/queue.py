"""Reading the queue: a tenant's cases newest first under a filter, a page at a time."""

from __future__ import annotations

from dataclasses import dataclass

from lab.accounts.models import Agent
from lab.operator.filters import QueueFilter
from lab.operator.models import ConstraintCandidate, FlagCase

PAGE_SIZE = 20


@dataclass(frozen=True)
class QueuePage:
    cases: list[FlagCase]
    # The cursor of the next page (the last record id shown), None on the last page.
    next_before: int | None


def queue_page_cases(
    tenant: str, wanted: QueueFilter, *, size: int = PAGE_SIZE, after: int = 0
) -> QueuePage:
    """One page of the tenant's cases, newest flagged turn first; `after` keeps only those
    whose record is newer than that id."""
    cases = FlagCase.objects.filter(tenant=tenant).select_related("record", "assignee")
    if wanted.state is not None:
        cases = cases.filter(state=wanted.state.value)
    if wanted.agent is not None:
        cases = cases.filter(agent=wanted.agent)
    if wanted.severity is not None:
        cases = cases.filter(record__severity=wanted.severity.value)
    if wanted.category is not None:
        cases = cases.filter(record__category=wanted.category.value)
    if wanted.before is not None:
        cases = cases.filter(record_id__lt=wanted.before)
    if after:
        cases = cases.filter(record_id__gt=after)
    found = list(cases.order_by("-record_id")[: size + 1])
    more = len(found) > size
    return QueuePage(found[:size], found[size - 1].record_id if more else None)


def agents_of(tenant: str) -> list[str]:
    """The agent slugs to filter by: the tenant's agents and any that have cases."""
    named = Agent.objects.filter(tenant__slug=tenant).values_list("slug", flat=True)
    flagged = FlagCase.objects.filter(tenant=tenant).values_list("agent", flat=True).distinct()
    return sorted({*named, *flagged})


def queue_has(tenant: str, case_id: int) -> bool:
    return FlagCase.objects.filter(tenant=tenant, pk=case_id).exists()


def candidates_of(tenant: str, *, limit: int = 10) -> list[ConstraintCandidate]:
    """The newest notes operators proposed for the constraint list by overriding a flag."""
    return list(ConstraintCandidate.objects.filter(tenant=tenant).order_by("-id")[:limit])
