"""A report being checked holds up nothing else: other requests are served meanwhile."""

from __future__ import annotations

import asyncio
import threading

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import AsyncClient
from django.urls import reverse

from lab.reports import worker
from lab.reports.structure import MAX_CONTAINERS
from lab.web import report_views

# Generous: reached only if the import wrongly blocks the request that would release it.
STUCK_S = 60


@pytest.mark.django_db(transaction=True)
async def test_a_page_answers_while_an_upload_is_still_being_verified(monkeypatch, guarded):
    checking, release = threading.Event(), threading.Event()
    verify = report_views.report_verify

    def held(raw: bytes, **keys):
        checking.set()
        release.wait(STUCK_S)
        return verify(raw, **keys)

    monkeypatch.setattr(report_views, "report_verify", held)
    client = AsyncClient()
    finished: list[str] = []

    async def upload():
        files = {"report": SimpleUploadedFile("r.json", guarded.raw)}
        response = await client.post(reverse("report_create"), files)
        finished.append("upload")
        return response

    uploading = asyncio.create_task(upload())
    assert await asyncio.to_thread(checking.wait, STUCK_S)
    page = await client.get(reverse("report_import_page"))
    finished.append("page")
    release.set()
    response = await uploading
    assert finished == ["page", "upload"]
    assert page.status_code == 200
    assert response.status_code == 200
    assert b"consistent, signed by this lab, verdict PASS" in response.content


@pytest.mark.django_db
def test_a_flood_of_empty_objects_is_refused_before_it_is_parsed(client):
    flood = b'{"schema_version": 1, "events": [' + b",".join([b"{}"] * 400_000) + b"]}"
    response = client.post(
        reverse("report_create"), {"report": SimpleUploadedFile("f.json", flood)}
    )
    assert response.status_code == 400
    assert f"a report holds at most {MAX_CONTAINERS:,}".encode() in response.content


@pytest.mark.django_db
def test_beyond_the_waiting_limit_an_upload_is_told_to_come_back(client, monkeypatch):
    full = threading.BoundedSemaphore(1)
    full.acquire()
    monkeypatch.setattr(worker, "_SLOTS", full)
    files = {"report": SimpleUploadedFile("r.json", b"{}")}
    response = client.post(reverse("report_create"), files)
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert b"busy checking other reports" in response.content
