"""Grade the agent turns of calls the lab did not make: one line each,
`CALL_ID/TURN_ID VERDICT GROUNDING`.

Exit 0 when no turn is unsupported, 1 when any is, 2 on bad input (with the line and the reason),
3 when the records cannot be stored (the lab's database is not set up).

A local operator's tool: the records are stored in the tenant `--tenant` names, and only there;
a list given with `--constraints` alone is graded and printed, and nothing is stored (the list's
own `tenant` is whatever the file says).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lab.audit.importing import (
    MAX_CONSTRAINTS_BYTES,
    BadAgent,
    agent_slug,
    constraints_for_tenant,
    constraints_upload,
    tenant_slug,
    transcript_grade,
)
from lab.audit.models import AuditRecord
from lab.audit.schema import AuditEntry, Tally, tally
from lab.audit.selectors import audit_record_out
from lab.audit.services import audit_records_store
from lab.audit.transcript import TranscriptError
from lab.facts.errors import ConstraintListError
from lab.facts.schema import ConstraintList
from lab.web.management.database import require_migrated

MAX_TRANSCRIPT_BYTES = 64 * 1024 * 1024
UNSUPPORTED, BAD_INPUT, NOT_STORED = 1, 2, 3


def verdict_line(entry: AuditEntry) -> str:
    """`CALL/TURN VERDICT GROUNDING`: turn ids repeat across calls, so the call names them."""
    verdicts = f"{entry.grade.verdict.value} {entry.grounding.verdict.value}"
    return f"{entry.call_id}/{entry.turn_id} {verdicts}"


def summary_line(counts: Tally, constraints: ConstraintList, *, created: int | None) -> str:
    verdicts = ", ".join(f"{n} {v.value}" for v, n in counts.verdicts.items())
    grounding = ", ".join(f"{n} {g.value}" for g, n in counts.grounding.items())
    stored = (
        f"{created} new audit records"
        if created is not None
        else "nothing stored (name --tenant to store the records in that tenant)"
    )
    return (
        f"{counts.turns} agent turns in {counts.calls} calls graded against "
        f"{constraints.version} (sha256 {constraints.digest()[:12]}): {verdicts}; "
        f"grounding {grounding}; {stored}"
    )


class Command(BaseCommand):
    help = (
        "Grade every agent turn of a JSONL transcript against a constraint list; prints "
        "CALL_ID/TURN_ID VERDICT GROUNDING per turn and a summary, and stores the audit records in "
        "the tenant --tenant names (nothing is stored without it). "
        "Exits 1 when any turn is unsupported, 2 on bad input."
    )

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        # The issue names the list's option --version: it replaces Django's print-the-version flag.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path, metavar="FILE.jsonl")
        parser.add_argument(
            "--constraints",
            type=Path,
            metavar="LIST.json",
            help="a constraint list: the seed's shape (price_list, hours, ...) or the lab's "
            "(default: the --tenant's list in fixtures/)",
        )
        parser.add_argument(
            "--tenant", help="the tenant the records are stored in (and whose list is used)"
        )
        parser.add_argument(
            "--version", dest="list_version", help="the tenant's list version (default: newest)"
        )
        parser.add_argument("--agent", help="the agent slug to record the turns under")
        parser.add_argument("--out", type=Path, metavar="DIR", help="write the records as JSONL")

    def handle(self, *args: Any, **options: Any) -> None:
        path: Path = options["file"]
        tenant: str | None = options["tenant"]
        if not tenant and not options["constraints"]:
            self._refuse("name the facts: --tenant T (its list, stored there) or --constraints")
        if options["list_version"] and (not tenant or options["constraints"]):
            self._refuse("--version needs --tenant, and picks its list instead of --constraints")
        if options["out"] and not tenant:
            self._refuse("--out writes the stored records: it needs --tenant")
        if tenant:
            try:
                tenant = tenant_slug(tenant)
            except ConstraintListError as error:
                self._refuse(f"--tenant: {error}")
        try:
            agent = agent_slug(options["agent"])
        except BadAgent as error:
            self._refuse(f"--agent: {error}")
        constraints = self._constraints(options)
        raw = self._read(path, MAX_TRANSCRIPT_BYTES, "transcript")
        try:
            entries = transcript_grade(
                raw,
                constraints=constraints,
                # Unstored entries still name a tenant; they never reach the database.
                tenant=tenant or constraints.tenant,
                agent=agent,
                max_bytes=MAX_TRANSCRIPT_BYTES,
            )
        except TranscriptError as error:
            self._refuse(f"{path}: {error}")
        created = None
        if tenant:
            try:
                require_migrated()
            except CommandError as error:
                self._refuse(str(error), code=NOT_STORED)
            stored = audit_records_store(entries)
            created = stored.created
        for entry in entries:
            self.stdout.write(verdict_line(entry))
        counts = tally(entries)
        self.stdout.write(summary_line(counts, constraints, created=created))
        if options["out"]:
            self._write_out(options["out"], path, stored.records)
        if counts.any_unsupported:
            raise SystemExit(UNSUPPORTED)

    def _constraints(self, options: dict[str, Any]) -> ConstraintList:
        try:
            if options["constraints"]:
                source: Path = options["constraints"]
                where = f"constraint list {source}"
                raw = self._read(source, MAX_CONSTRAINTS_BYTES, "constraint list")
                return constraints_upload(raw)
            where = "--tenant"
            return constraints_for_tenant(options["tenant"], options["list_version"])
        except ConstraintListError as error:
            self._refuse(f"{where}: {error}")

    def _read(self, path: Path, limit: int, what: str) -> bytes:
        """At most limit + 1 bytes, so an oversized file is refused without reading all of it."""
        try:
            with path.open("rb") as file:
                return file.read(limit + 1)
        except OSError as error:
            self._refuse(f"cannot read the {what} {path}: {error.strerror or error}")

    def _refuse(self, message: str, *, code: int = BAD_INPUT) -> NoReturn:
        self.stderr.write(f"gradeturns: {message}")
        raise SystemExit(code)

    def _write_out(self, directory: Path, source: Path, records: list[AuditRecord]) -> None:
        target = directory / f"{source.stem}.audit.jsonl"
        try:
            directory.mkdir(parents=True, exist_ok=True)
            with target.open("w", encoding="utf-8") as file:
                for record in records:
                    file.write(audit_record_out(record).model_dump_json() + "\n")
        except OSError as error:
            self._refuse(f"cannot write {target}: {error.strerror or error}", code=NOT_STORED)
        self.stderr.write(f"gradeturns: wrote {len(records)} records to {target}")
