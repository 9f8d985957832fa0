"""The upload page for calls the lab did not make: a JSONL transcript in, a grade per turn out.

The same shared path as `manage.py gradeturns` (lab.audit.importing), and the same audit records.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_http_methods
from pydantic import BaseModel, ConfigDict, ValidationError

from lab.audit.importing import (
    MAX_CONSTRAINTS_BYTES,
    BadAgent,
    agent_slug,
    constraints_for_tenant,
    constraints_upload,
    transcript_grade,
)
from lab.audit.schema import AuditEntry, tally
from lab.audit.services import audit_records_store
from lab.audit.transcript import TranscriptError
from lab.audit.turn_view import VERDICT_LABELS, turn_view
from lab.facts.errors import ConstraintListError, error_path
from lab.facts.loader import tenant_versions, tenants
from lab.facts.schema import ConstraintList

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


@dataclass(frozen=True)
class _Upload:
    form: GradeForm
    agent: str
    filename: str
    transcript: bytes
    constraints: bytes | None


@dataclass(frozen=True)
class _Graded:
    constraints: ConstraintList
    entries: list[AuditEntry]


def _choices() -> list[tuple[str, str]]:
    """Each tenant with the id of its newest list, for the picker."""
    return [(name, f"{name}_v{tenant_versions(name)[-1]}") for name in tenants()]


def _page(
    request: HttpRequest,
    *,
    form: GradeForm | None = None,
    error: str | None = None,
    status: int = 200,
    result: dict[str, object] | None = None,
) -> HttpResponse:
    context = {
        "form": form or GradeForm(),
        "tenants": _choices(),
        "error": error,
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
    if form.source == "upload":
        list_upload = request.FILES.get("constraints")
        if list_upload is None:
            return form, "No constraint list was uploaded: choose one, or pick a tenant."
        constraints = list_upload.read(MAX_CONSTRAINTS_BYTES + 1)
    return _Upload(
        form=form,
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
        agent=upload.agent,
        max_bytes=MAX_TRANSCRIPT_BYTES,
    )
    return _Graded(constraints=constraints, entries=entries)


@require_http_methods(["GET", "HEAD", "POST"])
async def grade_page(request: HttpRequest) -> HttpResponse:
    """GET: the upload form. POST: grade the transcript, store the records, show each turn."""
    if request.method == "GET":
        return await sync_to_async(_page, thread_sensitive=False)(request)
    upload = await sync_to_async(_upload_of, thread_sensitive=False)(request)
    if isinstance(upload, tuple):
        form, problem = upload
        return await sync_to_async(_page, thread_sensitive=False)(
            request, form=form, error=f"{problem} Nothing was stored.", status=400
        )
    try:
        # CPU-bound: off the event loop and off the one thread that serves the database.
        graded = await sync_to_async(_grade, thread_sensitive=False)(upload)
    except TranscriptError as error:
        problem = f"The transcript {upload.filename!r}: {error}."
        return await sync_to_async(_page, thread_sensitive=False)(
            request, form=upload.form, error=f"{problem} Nothing was stored.", status=400
        )
    except ConstraintListError as error:
        problem = f"The constraint list: {error}."
        return await sync_to_async(_page, thread_sensitive=False)(
            request, form=upload.form, error=f"{problem} Nothing was stored.", status=400
        )
    stored = await sync_to_async(audit_records_store)(graded.entries)
    counts = tally(graded.entries)
    result = {
        "filename": upload.filename,
        "constraints": graded.constraints,
        "digest": graded.constraints.digest(),
        "tally": counts,
        "verdict_counts": [(v, VERDICT_LABELS[v], n) for v, n in counts.verdicts.items()],
        "created": stored.created,
        "turns": [turn_view(e, r) for e, r in zip(graded.entries, stored.records, strict=True)],
    }
    return await sync_to_async(_page, thread_sensitive=False)(
        request, form=upload.form, result=result
    )
