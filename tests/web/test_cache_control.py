"""Authenticated answers are never cached, and an expected refusal is logged as one line."""

from __future__ import annotations

import io
import logging

import pytest
from django.contrib.auth.models import User
from django.test import Client

from lab.accounts.access import issue_token
from lab.accounts.models import Membership, Tenant
from lab.web.refusal_logs import OneLineRefusals

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner() -> User:
    tenant = Tenant.objects.create(slug="demo")
    user = User.objects.create_user("olive", password="pw-olive-1234")
    Membership.objects.create(user=user, tenant=tenant, role="owner")
    return user


def _no_store(response) -> bool:
    parts = {p.strip() for p in response.get("Cache-Control", "").split(",")}
    return {"no-store", "private"} <= parts


@pytest.mark.parametrize("path", ["/t/demo/rollup/", "/t/demo/queue/", "/", "/grade/", "/nope/"])
def test_every_answer_to_a_signed_in_session_is_private_and_not_stored(owner, path):
    client = Client()
    client.force_login(owner)
    assert _no_store(client.get(path)), path


@pytest.mark.parametrize(
    "path",
    ["/api/agents/grounding-citations-audit", "/api/agents/demo-agent/grader-verdicts", "/api/x"],
)
def test_every_api_answer_to_a_token_is_private_and_not_stored(owner, path):
    token = issue_token(owner)
    response = Client().get(path, headers={"Authorization": f"Bearer {token}"})
    assert _no_store(response), (path, response.status_code)
    bad = Client().get(path, headers={"Authorization": "Bearer vrl_nothing"})
    assert _no_store(bad)


def test_an_anonymous_public_page_keeps_its_own_caching():
    assert "no-store" not in Client().get("/").get("Cache-Control", "")


def test_a_session_that_owns_runs_gets_its_pages_unstored():
    visitor = Client()
    assert visitor.post("/runs/", {"scenario": "correction"}).status_code == 302
    assert _no_store(visitor.get("/"))
    assert _no_store(visitor.get("/grade/"))


def test_refusals_lose_their_traceback_and_server_errors_keep_it():
    try:
        raise PermissionError("refused")
    except PermissionError:
        import sys

        info = sys.exc_info()
    refusal = logging.LogRecord("django.request", logging.WARNING, "", 0, "Forbidden", (), info)
    refusal.status_code = 403
    failure = logging.LogRecord("django.request", logging.ERROR, "", 0, "Error", (), info)
    failure.status_code = 500
    one_line = OneLineRefusals()
    assert one_line.filter(refusal) and one_line.filter(failure)
    assert refusal.exc_info is None and failure.exc_info is info
    assert "Traceback" not in logging.Formatter().format(refusal)


def test_a_refused_request_is_logged_as_one_line(owner):
    (handler,) = [
        h
        for h in logging.getLogger("django.request").handlers
        if any(isinstance(f, OneLineRefusals) for f in h.filters)
    ]
    assert isinstance(handler, logging.StreamHandler)
    written = io.StringIO()
    before = handler.setStream(written)
    try:
        client = Client()
        client.force_login(owner)
        assert client.get("/t/other/queue/").status_code == 404
        assert client.post("/runs/", {"scenario": "nosuch"}).status_code == 400
        assert Client(enforce_csrf_checks=True).post("/runs/", {}).status_code == 403
    finally:
        handler.setStream(before)
    lines = written.getvalue().splitlines()
    assert any("Not Found: /t/other/queue/" in line for line in lines), lines
    assert any("Forbidden" in line for line in lines), lines
    assert "Traceback" not in written.getvalue()
