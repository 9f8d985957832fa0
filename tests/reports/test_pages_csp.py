"""No page needs what the Content-Security-Policy forbids: inline script, handlers, <style>."""

from __future__ import annotations

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.I)
HANDLER_ATTRIBUTE = re.compile(r"<[^>]+\son[a-z]+\s*=", re.I)
STYLE_ELEMENT = re.compile(r"<style\b", re.I)


@pytest.mark.django_db
def test_no_page_holds_inline_script_handlers_or_style_elements(guarded):
    client = Client()
    upload = client.post(
        reverse("report_create"),
        {"report": SimpleUploadedFile("r.json", guarded.raw)},
    )
    stored = re.search(r"/reports/([0-9a-f-]{36})/replay/", upload.content.decode())
    assert stored, "the import stored no report"
    pages = {
        "picker": client.get(reverse("index")),
        "import": client.get(reverse("report_import_page")),
        "result": upload,
        "replay": client.get(reverse("report_replay", args=[stored.group(1)])),
        "keys": client.get(reverse("trusted_keys")),
        "404": client.get("/nowhere/"),
    }
    for name, response in pages.items():
        page = response.content.decode()
        assert not INLINE_SCRIPT.search(page), name
        assert not HANDLER_ATTRIBUTE.search(page), name
        assert not STYLE_ELEMENT.search(page), name
        assert '"includeIndicatorStyles": false' in page, name
