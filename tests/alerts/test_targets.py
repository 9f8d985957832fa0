"""Alert targets: internal addresses refused at the form, at seeding and again at send time."""

from __future__ import annotations

import itertools
import socket
import subprocess
import sys
import threading
import time

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from lab.accounts.models import Membership, Tenant
from lab.alerts.delivery import WorkerConfig, deliver_due
from lab.alerts.models import DeliveryAttempt, MessageState, OutboxMessage, WebhookEndpoint
from lab.alerts.outbox import endpoint_create
from lab.alerts.retry import RetryPolicy
from lab.alerts.sender import post_alert
from lab.alerts.targets import TargetRefused, check_target, parse_allowed_hosts
from lab.audit.services import audit_record
from tests.alerts.support import critical_entries, receiver

PAGE = "/t/demo/alerts/"
INTERNAL = [
    "http://127.0.0.1:8000/hook",  # loopback, the lab's own port
    "http://localhost/hook",
    "http://[::1]/hook",
    "http://[::ffff:127.0.0.1]/hook",
    "http://2130706433/hook",  # 127.0.0.1 as one number
    "http://0.0.0.0/hook",
    "http://10.1.2.3/hook",
    "http://172.16.0.1/hook",
    "http://192.168.1.1/hook",
    "http://100.64.0.1/hook",  # CGNAT
    "http://169.254.169.254/latest/meta-data/",  # cloud metadata
    "http://[fd00:ec2::254]/",  # cloud metadata, IPv6
    "http://[fe80::1]/hook",
    "http://224.0.0.1/hook",
    "http://[2002:7f00:1::]/hook",  # 6to4 of loopback
    "http://93.184.216.34:22/hook",  # ssh on a public address
    "ftp://93.184.216.34/hook",
    "file:///etc/passwd",
]
PUBLIC = "http://93.184.216.34/hook"


def public(host: str, port: int) -> list[str]:
    return ["93.184.216.34"]


@pytest.mark.parametrize("url", INTERNAL)
def test_an_internal_or_non_web_target_is_refused(url):
    with pytest.raises(TargetRefused):
        check_target(url, own=("127.0.0.1", 8000))


def test_a_public_address_passes_and_names_what_to_connect_to():
    target = check_target("https://hooks.example.com/lab?x=1", resolve=public)
    assert (target.host, target.port, target.path, target.addresses) == (
        "hooks.example.com",
        443,
        "/lab?x=1",
        ("93.184.216.34",),
    )


def test_a_name_is_refused_if_any_of_its_addresses_is_internal():
    def mixed(host: str, port: int) -> list[str]:
        return ["93.184.216.34", "10.0.0.7"]

    with pytest.raises(TargetRefused, match=r"10\.0\.0\.7 is a private address"):
        check_target("https://hooks.example.com/", resolve=mixed)


def test_the_allowed_hosts_setting_is_the_only_exception_and_is_parsed_loudly():
    rules = parse_allowed_hosts("127.0.0.1, [::1]:9000 receiver.internal:8443")
    check_target("http://127.0.0.1:8000/x", allowed=rules)
    check_target("http://[::1]:9000/x", allowed=rules)
    with pytest.raises(TargetRefused):
        check_target("http://[::1]:9001/x", allowed=rules)
    for bad in ["http://x", "a:b", "user@host", "host/path"]:
        with pytest.raises(ValueError):
            parse_allowed_hosts(bad)
    env = {"LAB_ALERT_ALLOWED_HOSTS": "a:b", "PATH": "/usr/bin:/bin"}
    started = subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env={**env, "DJANGO_SETTINGS_MODULE": "lab.settings", "PYTHONPATH": "."},
        capture_output=True,
        text=True,
    )
    assert started.returncode != 0 and "LAB_ALERT_ALLOWED_HOSTS" in started.stderr


def test_one_setting_names_the_outbound_exceptions_and_the_old_name_still_adds_to_it() -> None:
    env = {
        "LAB_OUTBOUND_ALLOWED_HOSTS": "10.0.0.7:8443",
        "LAB_ALERT_ALLOWED_HOSTS": "127.0.0.1",
        "PATH": "/usr/bin:/bin",
        "DJANGO_SETTINGS_MODULE": "lab.settings",
        "PYTHONPATH": ".",
    }
    code = "import django; django.setup(); from django.conf import settings; "
    code += "print(sorted((r.host, r.port) for r in settings.LAB_OUTBOUND_ALLOWED_HOSTS))"
    started = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert started.stdout.strip() == "[('10.0.0.7', 8443), ('127.0.0.1', None)]"


@pytest.mark.parametrize(
    ("url", "rule"),
    [
        ("http://127.0.0.1:11434/v1", "127.0.0.1:11434"),
        ("http://[::1]:8001/", "[::1]:8001"),
        ("http://localhost:8001/", "localhost:8001"),
        ("http://10.1.2.3/", "10.1.2.3:80"),
    ],
)
def test_a_refusal_the_operator_could_lift_names_the_setting_that_lifts_it(url, rule) -> None:
    with pytest.raises(TargetRefused) as refused:
        check_target(url)
    assert f"LAB_OUTBOUND_ALLOWED_HOSTS={rule}" in str(refused.value)
    check_target(url, allowed=parse_allowed_hosts(rule))


@pytest.fixture
def owner(client, db):
    demo = Tenant.objects.create(slug="demo")
    user = User.objects.create_user("owner-demo")
    Membership.objects.create(user=user, tenant=demo, role="owner")
    client.force_login(user)
    return client


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8000/", "http://[::1]/", "http://8.8.8.8:22/", "http://10.0.0.1/"]
)
def test_the_form_refuses_an_internal_target_with_a_clear_error(owner, settings, url):
    settings.LAB_OUTBOUND_ALLOWED_HOSTS = frozenset()
    response = owner.post(PAGE, {"url": url})
    assert response.status_code == 400
    text = response.content.decode()
    assert "No endpoint was added" in text
    assert any(
        word in text for word in ("loopback", "private", "not a web port", "this lab itself")
    )
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.django_db
def test_a_target_that_turned_internal_is_a_failed_attempt_with_the_reason(settings):
    Tenant.objects.create(slug="demo")
    # Stored while the name resolved to a public address (or under an exception since removed).
    endpoint = endpoint_create(tenant="demo", url="http://127.0.0.1:8443/hook")
    settings.LAB_OUTBOUND_ALLOWED_HOSTS = frozenset()
    record = audit_record(entry=critical_entries()[0])
    config = WorkerConfig(
        timeout_s=5.0, lease_s=60.0, policy=RetryPolicy(base_s=5.0, cap_s=60.0, max_attempts=3)
    )
    [sent] = deliver_due(config=config, worker="w1")
    assert not sent.outcome.delivered and sent.outcome.status_code is None
    [attempt] = DeliveryAttempt.objects.filter(message__record=record, message__endpoint=endpoint)
    assert attempt.error.startswith("refused: ") and "loopback" in attempt.error
    assert OutboxMessage.objects.get(record=record).state == MessageState.PENDING


def test_the_send_connects_to_the_checked_address_and_keeps_the_host_name():
    with receiver() as hook:
        port = int(hook.url.rsplit(":", 1)[1].split("/")[0])
        answers = iter([["127.0.0.1"], ["10.9.9.9"]])

        def rebinding(host: str, port: int) -> list[str]:
            return next(answers)

        rules = parse_allowed_hosts(f"hooks.example.test:{port}")
        url = f"http://hooks.example.test:{port}/hooks/lab"
        sent = post_alert(
            url=url,
            secret="s",
            event_id="e",
            body=b"{}",
            timeout_s=5,
            allowed=rules,
            resolve=rebinding,
        )
        [request] = hook.wait_for(1)
        assert sent.delivered
        assert request.headers["Host"] == f"hooks.example.test:{port}"
        # Without the exception the next resolution is checked, and refused, before connecting.
        again = post_alert(
            url=url, secret="s", event_id="e", body=b"{}", timeout_s=5, resolve=rebinding
        )
        assert again.status_code is None and again.error.startswith("refused: ")
        assert len(hook.requests) == 1


@pytest.mark.django_db
def test_the_seeded_webhook_url_is_refused_loudly_when_internal(settings):
    settings.LAB_OUTBOUND_ALLOWED_HOSTS = frozenset()
    settings.LAB_ALERT_WEBHOOK_URL = "http://[::1]:8000/hook"
    settings.LAB_ALERT_WEBHOOK_SECRET = "s"
    with pytest.raises(
        CommandError, match=r"LAB_ALERT_WEBHOOK_URL .* is refused: ::1 is a loopback"
    ):
        call_command("runalerts", "--once")
    assert not WebhookEndpoint.objects.exists()


def test_the_send_timeout_is_a_deadline_over_the_whole_send_not_per_read() -> None:
    """A receiver that answers a byte at a time, each well within the timeout, is cut off when
    the send's time is up (http.client's timeout alone holds only each read)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    stop = threading.Event()

    def trickle() -> None:
        connection, _ = listener.accept()
        with connection:
            connection.recv(65536)
            for byte in itertools.cycle(b"HTTP/1.1 200 OK\r\nX-Slow: " + b"a" * 1000):
                if stop.is_set():
                    return
                try:
                    connection.sendall(bytes([byte]))
                except OSError:
                    return
                time.sleep(0.02)

    worker = threading.Thread(target=trickle, daemon=True)
    worker.start()
    started = time.monotonic()
    try:
        outcome = post_alert(
            url=f"http://127.0.0.1:{port}/hook",
            secret="s" * 32,
            event_id="e1",
            body=b"{}",
            timeout_s=0.5,
            allowed=parse_allowed_hosts(f"127.0.0.1:{port}"),
        )
    finally:
        stop.set()
        listener.close()
    assert time.monotonic() - started < 3.0
    assert outcome.status_code is None
    assert "no whole answer within 0.5 s" in outcome.error
