"""Verify evidence reports: the import page's six checks, one verdict line per file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lab.reports.keys import configured_trusted_keys
from lab.reports.services import report_verify
from lab.reports.signing import KeyProblem, public_key_from_pem
from lab.reports.structure import MAX_REPORT_BYTES
from lab.reports.verification import Verification
from lab.web.panel import agent_under_test, referee_used

MAX_PUBLIC_KEY_BYTES = 16 * 1024


def _read(path: Path, limit: int) -> bytes:
    """At most limit + 1 bytes, so an oversized file is refused without reading all of it."""
    with path.open("rb") as file:
        return file.read(limit + 1)


def detail_lines(verification: Verification) -> list[str]:
    """Each check's result and findings, then the stated and derived values side by side."""
    lines = []
    for result in verification.checks:
        lines.append(f"  {result.number}. {result.check}: {result.status} - {result.summary}")
        lines += [
            f"       {'x' if f.blocking else '-'} {f.kind}: {f.reason}" for f in result.findings
        ]
    if verification.differences:
        width = max(len(d.path) for d in verification.differences)
        lines.append(f"  {'':{width}}  {'the file states':30}  derived from the events")
        lines += [
            f"  {d.path:{width}}  {d.stated[:30]:30}  {d.derived}" for d in verification.differences
        ]
    regrade = verification.regrade
    if regrade is not None and regrade.mismatched:
        lines.append(f"  {'turn':10}  {'the log states':30}  re-graded now")
        for turn in regrade.turns:
            if not turn.matches and not turn.incomplete:
                stated = (
                    f"{turn.stated_verdict or 'no grade'}/{turn.stated_grounding or 'no audit'}"
                )
                derived = f"{turn.derived_verdict}/{turn.derived_grounding}"
                lines.append(f"  {turn.utterance_event_id:10}  {stated:30}  {derived}")
    return lines


class Command(BaseCommand):
    help = (
        "Check evidence reports (structure, contract, integrity, origin, re-evaluation, "
        "re-grade); exits 0 only when every report is consistent and signed by this lab or a "
        "key you trust."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
        parser.add_argument(
            "--trust",
            "--public-key",
            dest="trust",
            action="append",
            default=[],
            type=Path,
            metavar="KEYFILE",
            help="trust signatures by this Ed25519 public key (PEM); repeatable",
        )
        parser.add_argument(
            "--allow-unsigned",
            action="store_true",
            help="accept consistent reports whose origin is unproven (unsigned or unknown key)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        trusted = [*configured_trusted_keys()]
        for key_file in options["trust"]:
            try:
                trusted.append(public_key_from_pem(_read(key_file, MAX_PUBLIC_KEY_BYTES)))
            except OSError as error:
                raise CommandError(f"cannot read the public key {key_file}: {error}") from None
            except KeyProblem as error:
                raise CommandError(f"the public key {key_file} is {error}") from None
        accepted = True
        for path in options["files"]:
            try:
                raw = _read(path, MAX_REPORT_BYTES)
            except OSError as error:
                self.stdout.write(f"{path}: UNREADABLE ({error.strerror or error})")
                accepted = False
                continue
            try:
                verification = report_verify(raw, trusted=trusted)
            except Exception as error:  # a bug costs this file its verdict, never the rest theirs
                reason = f"{type(error).__name__}: {error}"[:300]
                self.stdout.write(f"{path}: ERROR (the lab could not check it: {reason})")
                accepted = False
                continue
            self.stdout.write(str(path))
            for line in detail_lines(verification):
                self.stdout.write(line)
            if verification.report is not None:
                tested = agent_under_test(verification.report.events)
                self.stdout.write(f"  Agent under test: {tested}")
                if (referee := referee_used(verification.report.events)) is not None:
                    self.stdout.write(f"  Referee: {referee}")
            self.stdout.write(verification.summary(str(path)))
            proven = verification.origin_proven or options["allow_unsigned"]
            accepted = accepted and verification.consistent and proven
        if not accepted:
            raise SystemExit(1)
