"""Report pages: download a run's evidence, import and verify a report, replay it event by event."""

from __future__ import annotations

from django.core.files.uploadedfile import UploadedFile
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.template.loader import render_to_string
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_GET, require_POST

from lab.evaluation.evaluator import evaluate
from lab.events.models import Run
from lab.events.types import AgentInterrupted, Event
from lab.reports.export import report_bytes
from lab.reports.keys import lab_public_key
from lab.reports.models import ImportedReport
from lab.reports.schema import report_json_schema
from lab.reports.services import ReportUnavailable, report_for_run, report_import, report_verify
from lab.reports.signing import (
    ORIGIN_DOES_NOT_PROVE,
    ORIGIN_PROVES,
    KeyProblem,
    public_key_from_pem,
    public_key_pem,
)
from lab.reports.structure import MAX_REPORT_BYTES
from lab.reports.verification import Verification
from lab.scenarios.catalog import UnknownScenario
from lab.scenarios.contracts import Contract
from lab.web.access import run_for_request
from lab.web.panel import TEMPLATE, decision_item, panel_context, summarize, transcript_item

# Stepping re-evaluates every prefix of the log; beyond this the replay shows the end state only.
REPLAY_MAX_EVENTS = 500
MAX_PUBLIC_KEY_BYTES = 16 * 1024


@require_GET
def run_report_json(request: HttpRequest, run_id: str) -> HttpResponse:
    run: Run = run_for_request(request, run_id).run  # the owner's, or a share link's
    try:
        report = report_for_run(run)
    except (ReportUnavailable, UnknownScenario) as error:
        return HttpResponse(f"No report: {error}.\n", status=409, content_type="text/plain")
    response = HttpResponse(report_bytes(report), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="run-{run.id}-report.json"'
    return response


@require_GET
def lab_public_key_pem(request: HttpRequest) -> HttpResponse:
    """The key that verifies this lab's report signatures, at a URL that does not change."""
    return HttpResponse(public_key_pem(lab_public_key()), content_type="text/plain; charset=utf-8")


@require_GET
def report_schema(request: HttpRequest) -> HttpResponse:
    return JsonResponse(report_json_schema(), json_dumps_params={"indent": 2})


def _import_page(
    request: HttpRequest, *, error: str | None = None, status: int = 200
) -> HttpResponse:
    context = {
        "error": error,
        "recent": ImportedReport.objects.all()[:10],
        "max_mb": MAX_REPORT_BYTES // (1024 * 1024),
    }
    return render(request, "reports/import.html", context, status=status)


@require_GET
def report_import_page(request: HttpRequest) -> HttpResponse:
    return _import_page(request)


def _too_large(upload: UploadedFile, limit: int, what: str) -> str | None:
    if upload.size is not None and upload.size > limit:
        return f"The {what} {upload.name!r} is {upload.size:,} bytes; the limit is {limit:,} bytes."
    return None


def _result(
    request: HttpRequest,
    verification: Verification,
    *,
    filename: str,
    stored: ImportedReport | None,
    status: int = 200,
) -> HttpResponse:
    report = verification.report
    context = {
        "verification": verification,
        "summary": verification.summary(filename),
        "filename": filename,
        "stored": stored,
        "report": report,
        "ended": bool(report and report.events) and report.events[-1].type == "run.ended",
        "origin_proves": ORIGIN_PROVES,
        "origin_does_not_prove": ORIGIN_DOES_NOT_PROVE,
    }
    return render(request, "reports/result.html", context, status=status)


@require_POST
def report_create(request: HttpRequest) -> HttpResponse:
    """Verify an uploaded report; keep it for replay only if it is structurally a report."""
    upload = request.FILES.get("report")
    if upload is None:
        return _import_page(
            request, error="No file was uploaded: choose a report (.json) to check.", status=400
        )
    key_upload = request.FILES.get("public_key")
    problem = _too_large(upload, MAX_REPORT_BYTES, "report") or (
        key_upload and _too_large(key_upload, MAX_PUBLIC_KEY_BYTES, "public key")
    )
    if problem:
        return _import_page(request, error=f"{problem} Nothing was stored.", status=400)
    supplied_key = None
    if key_upload is not None:
        try:
            supplied_key = public_key_from_pem(key_upload.read(MAX_PUBLIC_KEY_BYTES))
        except KeyProblem as error:
            message = f"The public key {key_upload.name!r} is {error}. Nothing was stored."
            return _import_page(request, error=message, status=400)
    filename = upload.name or "report.json"
    verification, stored = report_import(
        raw=upload.read(MAX_REPORT_BYTES + 1), filename=filename, supplied_key=supplied_key
    )
    status = 400 if verification.rejected else 200
    return _result(request, verification, filename=filename, stored=stored, status=status)


@require_GET
def report_page(request: HttpRequest, report_id: str) -> HttpResponse:
    """A stored import, verified again now against this lab's contracts and key."""
    stored = get_object_or_404(ImportedReport, pk=report_id)
    verification = report_verify(stored.document.encode())
    return _result(request, verification, filename=stored.filename, stored=stored)


def _partial(name: str, context: dict) -> str:
    return render_to_string(f"{TEMPLATE}#{name}", context)


def _replay_steps(contract: Contract, events: list[Event]) -> list[SafeString]:
    """Per event, the fragments it adds to the panel, as the live consumer sends them."""
    steps = [
        mark_safe(_partial("verdict_oob", {"evaluation": evaluate(contract, []), "ended": False}))
    ]
    for index, event in enumerate(events):
        seen = events[: index + 1]
        parts = [_partial("event_append", {"event": event, "summary": summarize(event)})]
        if (item := transcript_item(event, seen)) is not None:
            parts.append(_partial("transcript_append", {"item": item}))
        if isinstance(event.payload, AgentInterrupted):
            # An imported log may name an utterance it lacks, where the panel's own lookup raises.
            cut = next((e for e in seen if e.id == event.payload.utterance_event_id), None)
            if cut is not None and (item := transcript_item(cut, seen)) is not None:
                parts.append(_partial("transcript_replace", {"item": item}))
        if (decision := decision_item(event)) is not None:
            parts.append(_partial("decision_append", {"decision": decision}))
        ended = event.type == "run.ended"
        parts.append(
            _partial("verdict_oob", {"evaluation": evaluate(contract, seen), "ended": ended})
        )
        # Each part is a rendered (escaped) template; joining them must not escape them again.
        steps.append(mark_safe("".join(parts)))
    return steps


@require_GET
def report_replay(request: HttpRequest, report_id: str) -> HttpResponse:
    """The run panel rebuilt from an imported report, with every step ready for replay.js."""
    stored = get_object_or_404(ImportedReport, pk=report_id)
    verification = report_verify(stored.document.encode())
    report, contract = verification.report, verification.contract_used
    if report is None or contract is None:  # stored reports passed structure; the lab may change
        return _result(request, verification, filename=stored.filename, stored=None, status=409)
    events = report.events
    steppable = len(events) <= REPLAY_MAX_EVENTS
    context = {
        **panel_context(contract, events),
        "stored": stored,
        "report": report,
        "verification": verification,
        "summary": verification.summary(stored.filename),
        "steps": _replay_steps(contract, events) if steppable else [],
        "steppable": steppable,
        "max_events": REPLAY_MAX_EVENTS,
    }
    # panel_context evaluated with the same contract; the verdict shown is derived, as everywhere.
    return render(request, "reports/replay.html", context)
