"""A voice run's recording, for whoever may see the run (its owner or a share link's holder)."""

from __future__ import annotations

import re
from uuid import UUID

from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from lab.runs.recording_files import recording_path
from lab.web.access import run_for_request

_RANGE = re.compile(r"bytes=(\d+)-(\d*)")


@never_cache
@require_safe
def run_recording_wav(
    request: HttpRequest, run_id: UUID | None = None, share: str = ""
) -> HttpResponse | FileResponse:
    """The stereo WAV (caller left, agent right); one byte range when asked, for seeking."""
    run = run_for_request(request, run_id).run  # someone else's run: 404, as for the run page
    path = recording_path(str(run.id))
    if not path.is_file():
        raise Http404("This run has no recording.")
    size = path.stat().st_size
    wanted = _RANGE.fullmatch(request.headers.get("Range", "").strip())
    if wanted is None:
        response: HttpResponse | FileResponse = FileResponse(
            open(path, "rb"),  # noqa: SIM115 (FileResponse closes it once sent)
            content_type="audio/wav",
        )
    else:
        first = int(wanted[1])
        last = min(int(wanted[2]), size - 1) if wanted[2] else size - 1
        if first >= size or last < first:
            response = HttpResponse(status=416, content_type="text/plain")
            response["Content-Range"] = f"bytes */{size}"
            return response
        with open(path, "rb") as file:
            file.seek(first)
            body = file.read(last - first + 1)
        response = HttpResponse(body, status=206, content_type="audio/wav")
        response["Content-Range"] = f"bytes {first}-{last}/{size}"
    response["Accept-Ranges"] = "bytes"
    response["Content-Disposition"] = f'inline; filename="run-{run.id}.wav"'
    return response
