"""The queue page: members only, newest first, each card whole, filters and paging."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from lab.accounts.roles import Role
from lab.alerts.outbox import endpoint_create
from lab.audit.services import audit_records_store
from lab.operator.filters import QueueFilter
from lab.operator.models import FlagCase
from lab.operator.queue import queue_page_cases
from tests.audit.calls import demo_calls
from tests.operator.conftest import graded, one_call

pytestmark = pytest.mark.django_db
QUEUE = "/t/demo/queue/"


def card_ids(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'<article class="card queue-card" id="case-(\d+)"', html)]


def test_anonymous_visitors_are_sent_to_log_in(client, flagged):
    response = client.get(QUEUE)
    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next={QUEUE}"


def test_a_user_of_another_tenant_or_an_unknown_tenant_finds_no_queue(client, flagged, outsider):
    client.force_login(outsider)
    assert client.get(QUEUE).status_code == 404
    assert client.get("/t/nosuch/queue/").status_code == 404
    page = client.get("/t/acme/queue/").content.decode()
    # The other tenant's own queue holds only its own cases.
    assert set(card_ids(page)) == set(
        FlagCase.objects.filter(tenant="acme").values_list("id", flat=True)
    )


@pytest.mark.parametrize("role", list(Role))
def test_every_member_sees_the_flags_newest_first_and_only_actors_get_buttons(
    client, members, flagged, role
):
    client.force_login(members[role])
    response = client.get(QUEUE)
    assert response.status_code == 200
    html = response.content.decode()
    assert card_ids(html) == [c.id for c in flagged]
    assert ('name="action"' in html) is (role is not Role.VIEWER)
    assert f"You are {role.value}" in html
    # The socket carries the page's filters and the newest record it shows.
    assert f'ws-connect="/ws/t/demo/queue/?after={flagged[0].record_id}"' in html
    filtered = client.get(f"{QUEUE}?severity=info").content.decode()
    assert 'ws-connect="/ws/t/demo/queue/?severity=info&amp;after=' in filtered


def test_a_card_shows_the_turn_in_its_call_the_rationale_the_constraint_and_the_chunks(
    client, members, demo
):
    stored = audit_records_store(graded(one_call())).records
    wrong = next(r for r in stored if r.flagged)
    client.force_login(members[Role.OPERATOR])
    html = client.get(QUEUE).content.decode()
    card = html[html.index(f'id="case-{wrong.case.id}"') :]
    card = card[: card.index("</article>")]
    lines = re.findall(r'<li class="line (\w+)( flagged-turn)?"', card)
    # Three exchanges of one call, the middle agent turn flagged.
    assert lines == [
        ("caller", ""),
        ("agent", ""),
        ("caller", ""),
        ("agent", " flagged-turn"),
        ("caller", ""),
        ("agent", ""),
    ]
    assert wrong.utterance in card
    assert wrong.grade["rationale"] in card.replace("&#x27;", "'")
    ref = wrong.grade["constraint_ref"][0]
    assert re.search(rf"<code>{ref}</code>: A wheel truing [^<]* costs \$35.00", card)
    assert "[KB-1]" in card and "doc-" in card  # the retrieved chunks
    assert f'data-audit-record="{wrong.id}"' in card
    assert "the run" not in card  # an imported call has no run


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("severity=critical", lambda c: c.record.severity == "critical"),
        ("severity=info", lambda c: c.record.severity == "info"),
        ("category=hours", lambda c: c.record.category == "hours"),
        (
            "category=price&severity=critical",
            lambda c: c.record.category == "price" and c.record.severity == "critical",
        ),
        ("agent=demo-agent", lambda c: True),
        ("agent=someone-else", lambda c: False),
        ("state=open", lambda c: True),
        ("state=escalated", lambda c: False),
        ("severity=&category=&agent=&state=", lambda c: True),
    ],
)
def test_filters_narrow_the_queue(client, members, flagged, query, expected):
    client.force_login(members[Role.VIEWER])
    response = client.get(f"{QUEUE}?{query}")
    assert response.status_code == 200
    assert card_ids(response.content.decode()) == [c.id for c in flagged if expected(c)]


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("severity=loud", "severity &#x27;loud&#x27; is not one of info, warn, critical"),
        ("category=weather", "category &#x27;weather&#x27; is not one of price"),
        ("state=closed", "state &#x27;closed&#x27; is not one of open, acknowledged"),
        ("agent=Not%20A%20Slug", "is not an agent slug"),
        ("before=soon", "before &#x27;soon&#x27; is not a record id"),
        ("before=0", "is not a record id"),
        ("before=99999999999999999999999", "is not a record id"),
        ("sevrity=critical", "unknown filter &#x27;sevrity&#x27;"),
        ("state=open&state=escalated", "state is given 2 times"),
    ],
)
def test_a_bad_filter_is_a_400_that_says_what_is_wrong(client, members, flagged, query, message):
    client.force_login(members[Role.OPERATOR])
    response = client.get(f"{QUEUE}?{query}")
    assert response.status_code == 400
    html = response.content.decode()
    assert message in html
    assert card_ids(html) == []


def test_paging_walks_every_case_once_newest_first(client, members, flagged):
    seen, before = [], None
    while True:
        page = queue_page_cases("demo", QueueFilter(before=before), size=4)
        seen += [c.id for c in page.cases]
        if page.next_before is None:
            break
        before = page.next_before
    assert seen == [c.id for c in flagged]
    client.force_login(members[Role.OWNER])
    oldest = flagged[-1].record_id
    html = client.get(f"{QUEUE}?before={flagged[2].record_id}").content.decode()
    assert card_ids(html) == [c.id for c in flagged[3:]]
    assert 'id="queue-older"' not in html  # six cases fit on one page of twenty
    assert card_ids(client.get(f"{QUEUE}?before={oldest}").content.decode()) == []


def test_the_page_reads_the_same_number_of_queries_however_many_cards(client, members, demo):
    # With an endpoint, critical flags carry webhook deliveries that every card shows.
    endpoint_create(tenant="demo", url="http://127.0.0.1:9/hook")
    client.force_login(members[Role.OPERATOR])

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(QUEUE).status_code == 200
        return len(captured.captured_queries)

    audit_records_store(graded(demo_calls()[0]))
    six = queries()
    audit_records_store(graded(demo_calls()[0], agent="second-agent"))
    assert FlagCase.objects.count() == 12
    assert queries() == six
