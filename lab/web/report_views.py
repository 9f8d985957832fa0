"""Report pages: download a run's evidence, import and verify a report, replay it event by event."""

from __future__ import annotations

from dataclasses import dataclass
from uuid import UUID

from asgiref.sync import sync_to_async
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from django.core.files.uploadedfile import UploadedFile
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import aget_object_or_404, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_POST, require_safe

from lab.accounts.console import console_preload
from lab.evaluation.evaluator import evaluate
from lab.events.models import Run
from lab.events.types import Event
from lab.reports.export import report_bytes
from lab.reports.keys import lab_public_key
from lab.reports.models import ImportedReport, TrustedKey
from lab.reports.schema import Report, report_json_schema
from lab.reports.services import (
    ReportUnavailable,
    report_for_run,
    report_store,
    report_verify,
    trusted_keys,
)
from lab.reports.signing import (
    ORIGIN_DOES_NOT_PROVE,
    ORIGIN_PROVES,
    KeyProblem,
    public_key_from_pem,
    public_key_pem,
)
from lab.reports.structure import MAX_REPORT_BYTES
from lab.reports.verification import Verification
from lab.reports.worker import VerifierBusy, off_loop
from lab.runs.ownership import Viewer, run_access
from lab.runs.recording_files import recording_path
from lab.scenarios.catalog import UnknownScenario
from lab.scenarios.contracts import Contract
from lab.web.access import owner_token_of, run_for_request, user_id_for
from lab.web.panel import TEMPLATE, event_fragments, panel_context
from lab.web.playback import recording_context

# Stepping re-evaluates every prefix of the log; beyond this the replay shows the end state only.
REPLAY_MAX_EVENTS = 500
MAX_PUBLIC_KEY_BYTES = 16 * 1024


@require_safe
def run_report_json(request: HttpRequest, run_id: str) -> HttpResponse:
    run: Run = run_for_request(request, run_id).run  # the owner's, or a share link's
    return report_download(run)


def report_download(run: Run) -> HttpResponse:
    """A run's signed evidence report as a file download; 409 while it cannot be built."""
    try:
        report = report_for_run(run)
    except (ReportUnavailable, UnknownScenario) as error:
        return HttpResponse(f"No report: {error}.\n", status=409, content_type="text/plain")
    response = HttpResponse(report_bytes(report), content_type="application/json")
    response["Content-Disposition"] = f'attachment; filename="run-{run.id}-report.json"'
    return response


@require_safe
def lab_public_key_pem(request: HttpRequest) -> HttpResponse:
    """The key that verifies this lab's report signatures, at a URL that does not change."""
    return HttpResponse(public_key_pem(lab_public_key()), content_type="text/plain; charset=utf-8")


@require_safe
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


@require_safe
def report_import_page(request: HttpRequest) -> HttpResponse:
    return _import_page(request)


def _too_large(upload: UploadedFile, limit: int, what: str) -> str | None:
    if upload.size is not None and upload.size > limit:
        return f"The {what} {upload.name!r} is {upload.size:,} bytes; the limit is {limit:,} bytes."
    return None


@dataclass(frozen=True)
class _Upload:
    raw: bytes
    filename: str
    key: Ed25519PublicKey | None


def _upload_of(request: HttpRequest) -> _Upload | str:
    """The uploaded report and optional public key, or why they cannot be checked."""
    upload = request.FILES.get("report")
    if upload is None:
        return "No file was uploaded: choose a report (.json) to check."
    key_upload = request.FILES.get("public_key")
    problem = _too_large(upload, MAX_REPORT_BYTES, "report") or (
        key_upload and _too_large(key_upload, MAX_PUBLIC_KEY_BYTES, "public key")
    )
    if problem:
        return f"{problem} Nothing was stored."
    key = None
    if key_upload is not None:
        try:
            key = public_key_from_pem(key_upload.read(MAX_PUBLIC_KEY_BYTES))
        except KeyProblem as error:
            return f"The public key {key_upload.name!r} is {error}. Nothing was stored."
    raw = upload.read(MAX_REPORT_BYTES + 1)
    return _Upload(raw=raw, filename=upload.name or "report.json", key=key)


def _trusted(request: HttpRequest, *also: Ed25519PublicKey) -> tuple[Ed25519PublicKey, ...]:
    return (*trusted_keys(owner_token_of(request)), *also)


def _pinned_names(request: HttpRequest) -> dict[str, str]:
    owner = owner_token_of(request)
    pins = TrustedKey.objects.filter(owner=owner) if owner else TrustedKey.objects.none()
    return {pin.key_id: pin.name for pin in pins}


def _signer_name(report: Report | None, pinned: dict[str, str]) -> str | None:
    """The name the reader gave the key that signed report, if they pinned it."""
    return pinned.get(report.signature.key_id) if report and report.signature else None


def _result(
    request: HttpRequest,
    verification: Verification,
    *,
    filename: str,
    stored: ImportedReport | None,
    pinned: dict[str, str],
    status: int = 200,
) -> HttpResponse:
    report = verification.report
    context = {
        "verification": verification,
        "summary": verification.summary(filename),
        "filename": filename,
        "stored": stored,
        "report": report,
        "ended": bool(report and report.events and report.events[-1].type == "run.ended"),
        "signer_name": _signer_name(report, pinned),
        "origin_proves": ORIGIN_PROVES,
        "origin_does_not_prove": ORIGIN_DOES_NOT_PROVE,
    }
    return render(request, "reports/result.html", context, status=status)


def _busy(error: VerifierBusy) -> HttpResponse:
    response = HttpResponse(
        f"The lab is busy checking other reports ({error}); try again in a few seconds.\n",
        status=503,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = "5"
    return response


@require_POST
async def report_create(request: HttpRequest) -> HttpResponse:
    """Verify an uploaded report; keep it for replay only if it is structurally a report."""
    upload = await sync_to_async(_upload_of, thread_sensitive=False)(request)
    if isinstance(upload, str):
        return await sync_to_async(_import_page)(request, error=upload, status=400)
    extra = (upload.key,) if upload.key else ()
    trusted = await sync_to_async(_trusted)(request, *extra)
    try:
        verification = await off_loop(report_verify, upload.raw, trusted=trusted)
    except VerifierBusy as error:
        return _busy(error)
    stored = await sync_to_async(report_store)(
        raw=upload.raw, filename=upload.filename, verification=verification
    )
    pinned = await sync_to_async(_pinned_names)(request)
    await sync_to_async(console_preload)(request)
    return await sync_to_async(_result, thread_sensitive=False)(
        request,
        verification,
        filename=upload.filename,
        stored=stored,
        pinned=pinned,
        status=400 if verification.rejected else 200,
    )


@require_safe
async def report_page(request: HttpRequest, report_id: str) -> HttpResponse:
    """A stored import, verified again now against this lab's contracts and trusted keys."""
    stored = await aget_object_or_404(ImportedReport, pk=report_id)
    trusted = await sync_to_async(_trusted)(request)
    try:
        verification = await off_loop(report_verify, stored.document.encode(), trusted=trusted)
    except VerifierBusy as error:
        return _busy(error)
    pinned = await sync_to_async(_pinned_names)(request)
    await sync_to_async(console_preload)(request)
    return await sync_to_async(_result, thread_sensitive=False)(
        request, verification, filename=stored.filename, stored=stored, pinned=pinned
    )


def _replay_steps(contract: Contract, events: list[Event]) -> list[SafeString]:
    """Per event, the fragments it adds to the panel, as the live consumer sends them."""
    empty = render_to_string(
        f"{TEMPLATE}#verdict_oob", {"evaluation": evaluate(contract, []), "ended": False}
    )
    # Each step is rendered (escaped) templates; joining them must not escape them again.
    return [mark_safe(empty)] + [
        mark_safe(event_fragments(contract, events[: index + 1], event))
        for index, event in enumerate(events)
    ]


def _replay(
    request: HttpRequest,
    stored: ImportedReport,
    trusted: tuple[Ed25519PublicKey, ...],
    pinned: dict[str, str],
    local_recording: str | None = None,
) -> HttpResponse:
    """The whole replay page: verification, every step's fragments and the panel."""
    verification = report_verify(stored.document.encode(), trusted=trusted)
    report, contract = verification.report, verification.contract_used
    if report is None or contract is None:  # stored reports passed structure; the lab may change
        return _result(
            request,
            verification,
            filename=stored.filename,
            stored=None,
            pinned=pinned,
            status=409,
        )
    events = report.events
    steppable = len(events) <= REPLAY_MAX_EVENTS
    context = {
        **panel_context(contract, events),
        "stored": stored,
        "report": report,
        "verification": verification,
        "summary": verification.summary(stored.filename),
        "signer_name": _signer_name(report, pinned),
        "steps": _replay_steps(contract, events) if steppable else [],
        "steppable": steppable,
        "max_events": REPLAY_MAX_EVENTS,
        # A run of this lab's the reader may see plays from here; any other from their disk.
        **recording_context(
            events, url=local_recording if local_recording else None, offer_file=True
        ),
    }
    # panel_context evaluated with the same contract; the verdict shown is derived, as everywhere.
    return render(request, "reports/replay.html", context)


def _local_recording_url(request: HttpRequest, report: ImportedReport) -> str | None:
    """This lab's copy of the report's recording, where the reader may see its run."""
    try:
        run_id = str(UUID(report.run_id))
    except ValueError:
        return None
    viewer = Viewer(owner_token=owner_token_of(request), user_id=user_id_for(request))
    access = run_access(viewer=viewer, run_id=run_id)
    if access is None or not recording_path(run_id).is_file():
        return None
    return reverse("run_recording_wav", args=[run_id])


@require_safe
async def report_replay(request: HttpRequest, report_id: str) -> HttpResponse:
    """The run panel rebuilt from an imported report, with every step ready for replay.js."""
    stored = await aget_object_or_404(ImportedReport, pk=report_id)
    trusted = await sync_to_async(_trusted)(request)
    pinned = await sync_to_async(_pinned_names)(request)
    local = await sync_to_async(_local_recording_url)(request, stored)
    try:
        return await off_loop(_replay, request, stored, trusted, pinned, local)
    except VerifierBusy as error:
        return _busy(error)
