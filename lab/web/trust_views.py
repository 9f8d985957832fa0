"""The keys a reader trusts: pin an Ed25519 public key under a name, see the pins, remove one."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_http_methods, require_POST
from pydantic import BaseModel, Field, ValidationError

from lab.reports.keys import configured_trusted_keys, lab_public_key
from lab.reports.models import TrustedKey
from lab.reports.services import trusted_key_pin
from lab.reports.signing import KeyProblem, key_id, public_key_from_pem
from lab.web.access import owner_token_ensure, owner_token_of

MAX_PUBLIC_KEY_BYTES = 16 * 1024


class PinForm(BaseModel):
    name: str = Field(min_length=1, max_length=100)
    public_key_pem: str = Field(min_length=1, max_length=MAX_PUBLIC_KEY_BYTES)


def _page(request: HttpRequest, *, error: str | None = None, status: int = 200) -> HttpResponse:
    owner = owner_token_of(request)
    context = {
        "pins": TrustedKey.objects.filter(owner=owner) if owner else [],
        "configured": [key_id(key) for key in configured_trusted_keys()],
        "lab_key_id": key_id(lab_public_key()),
        "error": error,
        "max_kb": MAX_PUBLIC_KEY_BYTES // 1024,
    }
    return render(request, "reports/trusted_keys.html", context, status=status)


def _pem_of(request: HttpRequest) -> str:
    upload = request.FILES.get("public_key_file")
    if upload is not None:
        return upload.read(MAX_PUBLIC_KEY_BYTES + 1).decode("utf-8", errors="replace")
    return request.POST.get("public_key_pem", "")


@require_http_methods(["GET", "HEAD", "POST"])
def trusted_keys(request: HttpRequest) -> HttpResponse:
    """GET lists this reader's pinned keys; POST pins one (pasted or uploaded PEM)."""
    if request.method == "GET":
        return _page(request)
    try:
        form = PinForm(name=request.POST.get("name", "").strip(), public_key_pem=_pem_of(request))
        key = public_key_from_pem(form.public_key_pem.encode())
    except ValidationError as error:
        problems = "; ".join(f"{e['loc'][0]}: {e['msg']}" for e in error.errors(include_url=False))
        return _page(request, error=f"Nothing was pinned: {problems}.", status=400)
    except KeyProblem as error:
        return _page(request, error=f"Nothing was pinned: the key is {error}.", status=400)
    trusted_key_pin(owner=owner_token_ensure(request), name=form.name, key=key)
    return redirect("trusted_keys")


@require_POST
def trusted_key_remove(request: HttpRequest, pin_id: int) -> HttpResponse:
    # Another reader's pin and no pin at all look the same.
    pin = get_object_or_404(TrustedKey, pk=pin_id, owner=owner_token_of(request) or "")
    pin.delete()
    return redirect("trusted_keys")
