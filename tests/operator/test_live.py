"""The queue's WebSocket: a flag stored anywhere reaches every member's open queue page."""

from __future__ import annotations

import re

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client

from lab.accounts.agents import AgentRef
from lab.accounts.models import Tenant
from lab.accounts.roles import Role
from lab.asgi import application
from lab.audit.models import AuditRecord
from lab.audit.services import audit_records_store
from lab.events.types import Channel, Mode
from lab.operator.acting import act
from lab.operator.models import FlagCase
from lab.operator.states import Action
from lab.runs.services import run_start
from lab.web.management.headless import play_headless
from tests.audit.calls import demo_calls
from tests.operator.conftest import graded, member

pytestmark = pytest.mark.django_db(transaction=True)
ORIGIN = (b"origin", b"http://127.0.0.1")
# Generous: the card is rendered after the commit on a loaded two-core machine.
WAIT_S = 30


def _cookie(user: User | None) -> tuple[bytes, bytes]:
    client = Client()
    if user is not None:
        client.force_login(user)
    session = client.cookies.get(settings.SESSION_COOKIE_NAME)
    return (
        b"cookie",
        f"{settings.SESSION_COOKIE_NAME}={session.value if session else ''}".encode(),
    )


async def socket(user: User | None, path: str = "/ws/t/demo/queue/") -> WebsocketCommunicator:
    cookie = await database_sync_to_async(_cookie)(user)
    communicator = WebsocketCommunicator(application, path, headers=[ORIGIN, cookie])
    connected, _ = await communicator.connect(timeout=WAIT_S)
    assert connected
    return communicator


def _setup() -> dict[Role, User]:
    demo = Tenant.objects.create(slug="demo")
    Tenant.objects.create(slug="acme")
    return {role: member(f"{role.value}1", demo, role) for role in Role}


@pytest.fixture
async def people() -> dict[Role, User]:
    return await database_sync_to_async(_setup)()


def store_demo_calls() -> list[AuditRecord]:
    return audit_records_store(graded(demo_calls()[0])).records


def case_id(html: str) -> int:
    return int(re.search(r'id="case-(\d+)"', html)[1])


async def test_a_flagged_row_written_puts_its_card_on_top_of_every_open_queue(people):
    operator = await socket(people[Role.OPERATOR])
    viewer = await socket(people[Role.VIEWER])
    try:
        records = await database_sync_to_async(store_demo_calls)()
        cases = await database_sync_to_async(
            lambda: list(FlagCase.objects.order_by("record_id").values_list("id", "record_id"))
        )()
        assert [r for _, r in cases] == [r.id for r in records if r.flagged]
        for case, record in cases:
            html = await operator.receive_from(timeout=WAIT_S)
            assert html.startswith('<div id="queue-cards" hx-swap-oob="afterbegin">')
            assert case_id(html) == case
            assert f'data-audit-record="{record}"' in html
            assert 'name="action" value="acknowledge"' in html
            seen = await viewer.receive_from(timeout=WAIT_S)
            assert case_id(seen) == case and 'name="action"' not in seen
    finally:
        await operator.disconnect()
        await viewer.disconnect()


async def test_a_page_gets_only_the_new_cards_its_filters_match(people):
    info_only = await socket(people[Role.OWNER], "/ws/t/demo/queue/?severity=info&state=open")
    try:
        records = await database_sync_to_async(store_demo_calls)()
        html = await info_only.receive_from(timeout=WAIT_S)
        (info,) = [r for r in records if r.flagged and r.severity == "info"]
        assert f'data-audit-record="{info.id}"' in html
        assert 'data-severity="info"' in html
    finally:
        await info_only.disconnect()


async def test_an_action_redraws_the_card_on_every_open_page(people):
    records = await database_sync_to_async(store_demo_calls)()
    watching = await socket(people[Role.VIEWER], f"/ws/t/demo/queue/?after={records[-1].id}")
    try:
        case = await database_sync_to_async(lambda: FlagCase.objects.order_by("id").first())()
        await database_sync_to_async(act)(
            tenant="demo",
            case_id=case.id,
            actor=people[Role.ADMIN],
            action=Action.ACKNOWLEDGE,
            expected_version=0,
        )
        html = await watching.receive_from(timeout=WAIT_S)
        assert html.startswith(f'\n<article class="card queue-card" id="case-{case.id}"')
        assert 'hx-swap-oob="true"' in html and 'data-state="acknowledged"' in html
        assert "<strong>admin1</strong> acknowledge" in html
    finally:
        await watching.disconnect()


@pytest.mark.parametrize(
    ("who", "path", "code"),
    [
        (None, "/ws/t/demo/queue/", 4403),
        (Role.OWNER, "/ws/t/acme/queue/", 4404),
        (Role.OWNER, "/ws/t/nosuch/queue/", 4404),
        (Role.OWNER, "/ws/t/demo/queue/?severity=loud", 4400),
        (Role.OWNER, "/ws/t/demo/queue/?after=soon", 4400),
    ],
)
async def test_anyone_but_a_member_is_closed_out(people, who, path, code):
    communicator = await socket(people[who] if who else None, path)
    try:
        closed = await communicator.receive_output(timeout=WAIT_S)
        assert closed == {"type": "websocket.close", "code": code}
    finally:
        await communicator.disconnect()


async def test_an_ungrounded_run_lands_its_flagged_turns_in_the_queue_live(people, fast_clock):
    page = await socket(people[Role.OPERATOR])
    try:
        run = await database_sync_to_async(run_start)(
            scenario_id="facts_before_booking",
            mode=Mode.GUARDED,
            channel=Channel.TYPED,
            ungrounded=True,
            tenant_agent=AgentRef("demo", "demo-agent"),
        )
        await play_headless(run)
        flagged = await database_sync_to_async(
            lambda: set(
                AuditRecord.objects.filter(run=run, flagged=True).values_list("case__id", flat=True)
            )
        )()
        assert flagged and None not in flagged
        arrived: set[int] = set()
        while not flagged <= arrived:
            html = await page.receive_from(timeout=WAIT_S)
            arrived.add(case_id(html))
            assert f'href="/t/demo/runs/{run.id}/"' in html
            assert f'href="/t/demo/runs/{run.id}/report.json"' in html
    finally:
        await page.disconnect()
    cases = await database_sync_to_async(
        lambda: list(FlagCase.objects.filter(record__run=run).values_list("agent", "state"))
    )()
    assert set(cases) == {("demo-agent", "open")}


async def test_a_connecting_page_gets_the_cards_stored_after_it_was_drawn(people):
    """The page was drawn showing record `after`; flags stored before its socket joined arrive
    on connect, oldest first (each goes on top), within the page's filters."""
    records = await database_sync_to_async(store_demo_calls)()
    flagged = [r for r in records if r.flagged]
    drawn = flagged[1].id
    page = await socket(people[Role.OPERATOR], f"/ws/t/demo/queue/?after={drawn}&category=price")
    try:
        missed = [r for r in flagged if r.id > drawn and r.category == "price"]
        for record in missed:
            html = await page.receive_from(timeout=WAIT_S)
            assert html.startswith('<div id="queue-cards" hx-swap-oob="afterbegin">')
            assert f'data-audit-record="{record.id}"' in html
        assert await page.receive_nothing(timeout=0.2)
    finally:
        await page.disconnect()
