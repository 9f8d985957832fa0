"""Verify evidence reports: the import page's six checks, one verdict line per file; with
--recording, a downloaded recording against the digest its report names."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from django.core.management.base import BaseCommand, CommandError, CommandParser

from lab.events.types import Event
from lab.reports.comparison import is_comparison
from lab.reports.comparison_export import comparison_verify
from lab.reports.keys import configured_trusted_keys
from lab.reports.services import report_verify
from lab.reports.signing import KeyProblem, public_key_from_pem
from lab.reports.structure import MAX_REPORT_BYTES
from lab.reports.verification import Verification
from lab.web.panel import agent_under_test, referee_used
from lab.web.playback import recording_closed

MAX_PUBLIC_KEY_BYTES = 16 * 1024


def _read(path: Path, limit: int) -> bytes:
    """At most limit + 1 bytes, so an oversized file is refused without reading all of it."""
    with path.open("rb") as file:
        return file.read(limit + 1)


def _is_comparison(raw: bytes) -> bool:
    try:
        return is_comparison(json.loads(raw))
    except (ValueError, RecursionError):
        # Not one, or a nesting bomb: the report checks refuse it on its raw bytes.
        return False


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
            "--recording",
            type=Path,
            metavar="WAV",
            help="also check a downloaded recording against the digest its report's "
            "recording.closed names (one report only)",
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
        if options["recording"] is not None and len(options["files"]) != 1:
            raise CommandError("--recording checks the recording of one report: name one FILE")
        accepted = True
        for path in options["files"]:
            try:
                raw = _read(path, MAX_REPORT_BYTES)
            except OSError as error:
                self.stdout.write(f"{path}: UNREADABLE ({error.strerror or error})")
                accepted = False
                continue
            if _is_comparison(raw):
                accepted = self._comparison(path, raw, trusted) and accepted
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
            if options["recording"] is not None:
                events = verification.report.events if verification.report else []
                accepted = self._recording_matches(options["recording"], events) and accepted
            proven = verification.origin_proven or options["allow_unsigned"]
            accepted = accepted and verification.consistent and proven
        if not accepted:
            raise SystemExit(1)

    def _comparison(self, path: Path, raw: bytes, trusted: list[Ed25519PublicKey]) -> bool:
        """A comparison report: each cell recomputed from its trials' own reports."""
        found = comparison_verify(raw, trusted=trusted)
        self.stdout.write(f"{path} (comparison report)")
        for problem in found.problems:
            self.stdout.write(f"  - {problem}")
        if found.consistent:
            origin = "signed by this lab" if found.signed_by_lab else "signed by a key you trust"
            self.stdout.write(
                f"{path}: consistent, {origin}; {found.cells} cells re-derived from their "
                "trials' events"
            )
        else:
            self.stdout.write(f"{path}: INCONSISTENT ({len(found.problems)} problems)")
        return found.consistent

    def _recording_matches(self, wav: Path, events: list[Event]) -> bool:
        closed = recording_closed(events)
        if closed is None:
            self.stdout.write(f"  Recording {wav}: the report names no recording")
            return False
        digest = hashlib.sha256()
        try:
            with open(wav, "rb") as file:
                while block := file.read(1 << 20):
                    digest.update(block)
        except OSError as error:
            self.stdout.write(f"  Recording {wav}: UNREADABLE ({error.strerror or error})")
            return False
        if digest.hexdigest() != closed.digest:
            self.stdout.write(
                f"  Recording {wav}: DOES NOT MATCH (sha256 {digest.hexdigest()}, "
                f"the report names {closed.digest})"
            )
            return False
        cut = ", truncated at the size cap" if closed.truncated else ""
        self.stdout.write(
            f"  Recording {wav}: matches recording.closed (sha256 {closed.digest}, "
            f"{closed.bytes} bytes, {closed.duration_ms} ms{cut})"
        )
        return True
