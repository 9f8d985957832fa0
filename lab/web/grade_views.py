"""The upload page for calls the lab did not make: a JSONL transcript in, a grade per turn out.

The same shared path as `manage.py gradeturns` (lab.audit.importing), and the same audit records.
Grading against a tenant's list stores the records in that tenant, so it takes a signed-in
operator (or above) of it; a list anyone uploads is graded and shown, and nothing is stored.
The tenant never comes from an uploaded file.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any, Literal

from asgiref.sync import sync_to_async
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods, require_safe
from pydantic import BaseModel, ConfigDict, ValidationError

from lab.accounts.access import role_in
from lab.accounts.console import console_preload
from lab.accounts.models import Membership
from lab.accounts.roles import Role, can_act
from lab.audit.importing import (
    MAX_CONSTRAINTS_BYTES,
    BadAgent,
    agent_slug,
    constraints_for_tenant,
    constraints_upload,
    transcript_grade,
)
from lab.audit.models import AuditRecord
from lab.audit.schema import AuditEntry, tally
from lab.audit.services import audit_records_store
from lab.audit.transcript import TranscriptError
from lab.audit.turn_view import VERDICT_LABELS, turn_view
from lab.facts.errors import ConstraintListError, error_path
from lab.facts.loader import tenant_versions, tenants
from lab.facts.schema import Capability, ConstraintList
from lab.web.list_shapes import example_bytes, example_lists, field_example, lab_shape, seed_shape

# Grading runs while the uploader waits: a bigger transcript belongs to `manage.py gradeturns`.
MAX_TRANSCRIPT_BYTES = 2 * 1024 * 1024
TEMPLATE = "grading/grade.html"


class GradeForm(BaseModel):
    """The form's fields besides the files."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    source: Literal["tenant", "upload"] = "tenant"
    tenant: str = ""
    version: str = ""
    agent: str = ""


class Refused(Exception):
    """Grading against this tenant's list is not the requester's to do (nothing is stored)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class _Upload:
    form: GradeForm
    # The tenant the records go to: the form's, checked against the member's role; None when
    # the list was uploaded (graded and shown, stored nowhere).
    store_in: str | None
    agent: str
    filename: str
    transcript: bytes
    constraints: bytes | None


@dataclass(frozen=True)
class _Graded:
    constraints: ConstraintList
    entries: list[AuditEntry]


def _choices(user: Any) -> list[tuple[str, str]]:
    """Each tenant with a list that the user may store into, with its newest list's id."""
    if not user.is_authenticated:
        return []
    acting = {r.value for r in Role if can_act(r)}
    mine = set(
        Membership.objects.filter(
            user_id=user.pk, user__is_active=True, role__in=acting
        ).values_list("tenant__slug", flat=True)
    )
    return [(name, f"{name}_v{tenant_versions(name)[-1]}") for name in tenants() if name in mine]


def _store_check(user: Any, tenant: str) -> str:
    """The tenant, if the user may store records in it (operator or above); Refused otherwise."""
    if not user.is_authenticated:
        raise Refused(
            403,
            f"Grading against {tenant[:64]!r}'s list stores the records in its audit trail: sign "
            "in as one of its operators. Without an account, upload a constraint list instead "
            "(the turns are graded and shown, and nothing is stored).",
        )
    role = role_in(user, tenant)
    if role is None:
        # Another tenant and no tenant at all look the same.
        raise Refused(404, f"You have no tenant {tenant[:64]!r} to store records in.")
    if not can_act(role):
        raise Refused(
            403, f"As a {role.value} of {tenant} you may read its audit trail, not add to it."
        )
    return tenant


def _page(
    request: HttpRequest,
    *,
    choices: list[tuple[str, str]],
    form: GradeForm | None = None,
    error: str | None = None,
    status: int = 200,
    result: dict[str, object] | None = None,
    list_error: ConstraintListError | None = None,
) -> HttpResponse:
    context = {
        "form": form or GradeForm(source="tenant" if choices else "upload"),
        "tenants": choices,
        "error": error,
        "list_error": list_error,
        "list_field": field_example(list_error.path) if list_error else None,
        "examples": example_lists(),
        "lab_shape": lab_shape(),
        "seed_shape": seed_shape(),
        "capability_names": [capability.value for capability in Capability],
        "max_mb": MAX_TRANSCRIPT_BYTES // (1024 * 1024),
        "max_list_kb": MAX_CONSTRAINTS_BYTES // 1024,
        **(result or {}),
    }
    return render(request, TEMPLATE, context, status=status)


def _upload_of(request: HttpRequest) -> _Upload | tuple[GradeForm, str]:
    """The uploaded files and fields, or the form as sent and why it cannot be graded."""
    try:
        form = GradeForm.model_validate(request.POST.dict())
    except ValidationError as error:
        first = error.errors()[0]
        return GradeForm(), f"{error_path(first['loc'])}: {first['msg']}."
    try:
        agent = agent_slug(form.agent)
    except BadAgent as error:
        return form, f"Agent: {error}."
    upload = request.FILES.get("transcript")
    if upload is None:
        return form, "No transcript was uploaded: choose a JSONL file, one turn per line."
    constraints = None
    store_in = None
    if form.source == "upload":
        list_upload = request.FILES.get("constraints")
        if list_upload is None:
            return form, "No constraint list was uploaded: choose one, or pick a tenant."
        constraints = list_upload.read(MAX_CONSTRAINTS_BYTES + 1)
    else:
        store_in = _store_check(request.user, form.tenant)
    return _Upload(
        form=form,
        store_in=store_in,
        agent=agent,
        filename=upload.name or "transcript.jsonl",
        transcript=upload.read(MAX_TRANSCRIPT_BYTES + 1),
        constraints=constraints,
    )


def _grade(upload: _Upload) -> _Graded:
    """Choose the facts and grade every agent turn; raises on bad input."""
    if upload.constraints is not None:
        constraints = constraints_upload(upload.constraints)
    else:
        constraints = constraints_for_tenant(upload.form.tenant, upload.form.version)
    entries = transcript_grade(
        upload.transcript,
        constraints=constraints,
        # An uploaded list's entries are only shown; the name they carry is never stored.
        tenant=upload.store_in or constraints.tenant,
        agent=upload.agent,
        max_bytes=MAX_TRANSCRIPT_BYTES,
    )
    return _Graded(constraints=constraints, entries=entries)


@require_http_methods(["GET", "HEAD", "POST"])
async def grade_page(request: HttpRequest) -> HttpResponse:
    """GET: the upload form. POST: grade the transcript, store the records, show each turn."""
    # Who is asking and where they may store, read on the database's own thread: the page
    # renders off it, with the user already loaded.
    choices = await sync_to_async(_choices)(request.user)
    await sync_to_async(console_preload)(request)
    page = partial(sync_to_async(_page, thread_sensitive=False), request, choices=choices)
    if request.method == "GET":
        return await page()
    try:
        upload = await sync_to_async(_upload_of)(request)
    except Refused as refused:
        return await page(error=f"{refused} Nothing was stored.", status=refused.status)
    if isinstance(upload, tuple):
        form, problem = upload
        return await page(form=form, error=f"{problem} Nothing was stored.", status=400)
    try:
        # CPU-bound: off the event loop and off the one thread that serves the database.
        graded = await sync_to_async(_grade, thread_sensitive=False)(upload)
    except TranscriptError as error:
        problem = f"The transcript {upload.filename!r}: {error}."
        return await page(form=upload.form, error=f"{problem} Nothing was stored.", status=400)
    except ConstraintListError as error:
        problem = f"The constraint list: {error}."
        return await page(
            form=upload.form, error=f"{problem} Nothing was stored.", status=400, list_error=error
        )
    records: list[AuditRecord | None] = [None] * len(graded.entries)
    created = None
    if upload.store_in is not None:
        stored = await sync_to_async(audit_records_store)(graded.entries)
        records, created = list(stored.records), stored.created
    counts = tally(graded.entries)
    result = {
        "filename": upload.filename,
        "constraints": graded.constraints,
        "digest": graded.constraints.digest(),
        "tally": counts,
        "verdict_counts": [(v, VERDICT_LABELS[v], n) for v, n in counts.verdicts.items()],
        "created": created,
        "stored_in": upload.store_in,
        "turns": [turn_view(e, r) for e, r in zip(graded.entries, records, strict=True)],
    }
    return await page(form=upload.form, result=result)


@require_safe
def example_list(request: HttpRequest, filename: str) -> HttpResponse:
    """An example constraint list from fixtures/, as a file to download and edit."""
    raw = example_bytes(filename)
    if raw is None:
        raise Http404("No such example list.")
    response = HttpResponse(raw, content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
