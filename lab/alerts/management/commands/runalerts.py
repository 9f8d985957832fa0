"""`manage.py runalerts`: the outbox worker; polls for due alerts until SIGTERM or Ctrl-C."""

from __future__ import annotations

import os
import signal
import threading
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import close_old_connections

from lab.alerts.delivery import Sent, WorkerConfig, deliver_due, worker_name
from lab.alerts.outbox import default_endpoint_configure
from lab.alerts.targets import TargetRefused

DEFAULT_TENANT = "demo"


class Command(BaseCommand):
    help = "Send the alert webhooks waiting in the outbox, retrying failures with backoff."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--once", action="store_true", help="send what is due now, then exit")
        parser.add_argument(
            "--exit-with-parent",
            action="store_true",
            help="stop when the process that started this one ends (make run's shell)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        config = WorkerConfig.from_settings()
        self._configure_default_endpoint()
        stop = threading.Event()
        for number in (signal.SIGTERM, signal.SIGINT):
            # Stop after the send in flight (bounded by the timeout): a claim is never orphaned
            # by a polite stop.
            signal.signal(number, lambda *_: stop.set())
        parent = os.getppid() if options["exit_with_parent"] else None
        worker = worker_name()
        if not options["once"]:
            self.stdout.write(
                f"runalerts {worker}: polling every {settings.LAB_ALERT_POLL_S:g} s", ending="\n"
            )
        while not stop.is_set():
            # A long-lived process: drop connections the database closed since the last poll.
            close_old_connections()
            for sent in deliver_due(config=config, worker=worker, stop=stop):
                self._report(sent)
            if options["once"] or (parent is not None and os.getppid() != parent):
                break
            stop.wait(settings.LAB_ALERT_POLL_S)
        close_old_connections()

    def _configure_default_endpoint(self) -> None:
        url = settings.LAB_ALERT_WEBHOOK_URL
        if not url:
            return
        try:
            endpoint, created = default_endpoint_configure(
                tenant=DEFAULT_TENANT, url=url, secret=settings.LAB_ALERT_WEBHOOK_SECRET
            )
        except TargetRefused as refusal:
            raise CommandError(f"LAB_ALERT_WEBHOOK_URL {url!r} is refused: {refusal}") from None
        verb = "added" if created else "kept"
        self.stdout.write(f"runalerts: {verb} endpoint {endpoint.url} for tenant {DEFAULT_TENANT}")

    def _report(self, sent: Sent) -> None:
        outcome = sent.outcome
        answer = outcome.status_code if outcome.status_code is not None else outcome.error
        self.stdout.write(
            f"alert {sent.event_id} → {sent.url}: {answer} in {outcome.duration_ms:.0f} ms, "
            f"{sent.state}"
        )
