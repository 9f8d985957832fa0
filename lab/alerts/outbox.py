"""Writing alerts into the outbox, in the transaction that stores their audit rows.

The edge around lab.alerts.payload: it reads the tenant's setting, its endpoints and the lab's
public URL (LAB_PUBLIC_URL) that the payload's links start with.
"""

from __future__ import annotations

import secrets
from collections import defaultdict
from collections.abc import Sequence

from django.conf import settings
from django.db import transaction
from django.db.models import prefetch_related_objects
from django.urls import reverse
from django.utils import timezone

from lab.accounts.models import Tenant
from lab.alerts.models import OutboxMessage, WebhookEndpoint
from lab.alerts.payload import AlertLinks, AlertPayload, alert_due, recommended_action
from lab.alerts.targets import check_target, origin_of
from lab.audit.models import AuditRecord
from lab.grading.schema import Category, Severity, Verdict

SECRET_PREFIX = "whsec_"


def enqueue_alerts(records: Sequence[AuditRecord]) -> int:
    """One pending message per active endpoint of the tenant for each record that qualifies.

    Call it inside the transaction that inserts the records: the alert commits with its row or
    not at all. A record already alerted to an endpoint is skipped. Returns how many were written.
    """
    flagged = [r for r in records if r.flagged]
    if not flagged:
        return 0
    tenants = {r.tenant for r in flagged}
    endpoints: dict[str, list[WebhookEndpoint]] = defaultdict(list)
    for endpoint in WebhookEndpoint.objects.filter(tenant__in=tenants, active=True):
        endpoints[endpoint.tenant].append(endpoint)
    on_warn = set(
        Tenant.objects.filter(slug__in=tenants, alert_on_warn=True).values_list("slug", flat=True)
    )
    now = timezone.now()
    # The console link names the flag's case (lab.operator opens it first, in this transaction).
    prefetch_related_objects(flagged, "case")
    messages = [
        OutboxMessage(
            endpoint=endpoint,
            record=record,
            payload=alert_payload(record).model_dump(mode="json"),
            next_attempt_at=now,
        )
        for record in flagged
        if alert_due(Severity(record.severity), alert_on_warn=record.tenant in on_warn)
        for endpoint in endpoints[record.tenant]
    ]
    # A concurrent writer of the same rows may have enqueued first; the unique pair keeps one.
    OutboxMessage.objects.bulk_create(messages, ignore_conflicts=True)
    return len(messages)


def alert_payload(record: AuditRecord) -> AlertPayload:
    """The webhook body for a flagged audit row, its links absolute on this lab."""
    grade = record.grade
    verdict = Verdict(record.verdict)
    category = Category(record.category) if record.category else None
    return AlertPayload(
        severity=Severity(record.severity),
        tenant_id=record.tenant,
        call_id=record.call_id,
        turn_id=record.turn_id,
        verdict=verdict,
        category=category,
        claim=grade.get("claim"),
        agent_utterance=record.utterance,
        caller_utterance=record.caller_turn or None,
        constraint_ref=tuple(grade.get("constraint_ref") or ()),
        rationale=grade["rationale"],
        confidence=grade["confidence"],
        grader_model=f"{record.grader}-v{record.grader_version}",
        constraint_list_version=record.constraint_list_version,
        audit_row_ref=record.ref,
        links=_links(record),
        recommended_action=recommended_action(verdict, category),
    )


def _links(record: AuditRecord) -> AlertLinks:
    """The tenant's pages (members only), never the run's owner-only ones; no call audio is kept."""
    base = settings.LAB_PUBLIC_URL
    case = getattr(record, "case", None)
    console = (
        reverse("operator_case", args=[record.tenant, case.id])
        if case is not None
        else reverse("queue_page", args=[record.tenant])
    )
    transcript = f"{reverse('operator_call', args=[record.tenant, record.call_id])}#{record.ref}"
    return AlertLinks(operator_console=base + console, transcript=base + transcript, audio=None)


def new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def endpoint_url_check(url: str) -> str:
    """The URL if alerts may go there (lab.alerts.targets); raises TargetRefused otherwise.

    A name that does not resolve yet is accepted: every send resolves and checks it again.
    """
    check_target(
        url,
        allowed=settings.LAB_OUTBOUND_ALLOWED_HOSTS,
        own=origin_of(settings.LAB_PUBLIC_URL),
        unresolved_ok=True,
    )
    return url


def endpoint_create(*, tenant: str, url: str, secret: str | None = None) -> WebhookEndpoint:
    """A new active endpoint for the tenant, with a generated secret unless one is given.

    Raises TargetRefused for a URL alerts may not go to.
    """
    endpoint_url_check(url)
    return WebhookEndpoint.objects.create(tenant=tenant, url=url, secret=secret or new_secret())


def endpoint_set_active(*, endpoint: WebhookEndpoint, active: bool) -> None:
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(active=active)
    endpoint.active = active


@transaction.atomic
def default_endpoint_configure(
    *, tenant: str, url: str, secret: str
) -> tuple[WebhookEndpoint, bool]:
    """The endpoint LAB_ALERT_WEBHOOK_URL names, made or updated; True when it is new.

    Raises TargetRefused for a URL alerts may not go to, as the form does.
    """
    endpoint_url_check(url)
    endpoint = WebhookEndpoint.objects.filter(tenant=tenant, url=url).order_by("id").first()
    if endpoint is None:
        return endpoint_create(tenant=tenant, url=url, secret=secret), True
    WebhookEndpoint.objects.filter(pk=endpoint.pk).update(secret=secret, active=True)
    endpoint.secret, endpoint.active = secret, True
    return endpoint, False
