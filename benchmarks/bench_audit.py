"""Audit benchmark: rows ingested per second, and the tenant rollup's time at 1,000,000 rows.

Run: .venv/bin/python -m benchmarks.bench_audit [--rows 1000000] [--ingest 100000]
On a temporary SQLite file, or on the PostgreSQL database DATABASE_URL names (its audit rows are
added to; use a throwaway one: python -m lab.cluster backing -- .venv/bin/python -m ...).
The first --ingest rows go through the real write path (audit_records_store, batches of 500:
content keys, the duplicate check, the day counters, the flag hook); the rest are bulk-inserted
copies of the same rows, to reach --rows quickly, and then the day counters are rebuilt. Rows: ten
tenants (one holds half of them), five agents each, spread over 90 days, graded by the
deterministic grader from a realistic call mix with BM25 retrieval windows. Aim: the rollup under
200 ms. Not part of make test.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from functools import partial
from itertools import islice
from typing import Any
from unittest import mock

_STATE = tempfile.mkdtemp(prefix="bench-audit-")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "lab.settings")
os.environ.setdefault("DATABASE_URL", f"sqlite:///{_STATE}/bench.sqlite3")
os.environ["LAB_STATE_DIR"] = _STATE

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

from lab.api.rollup import tenant_rollup  # noqa: E402
from lab.audit import services  # noqa: E402
from lab.audit.daily import rebuild  # noqa: E402
from lab.audit.imported import grade_transcript  # noqa: E402
from lab.audit.models import AuditRecord  # noqa: E402
from lab.audit.schema import AuditEntry  # noqa: E402
from lab.audit.selectors import audit_records_for_agent  # noqa: E402
from lab.audit.services import audit_records_store  # noqa: E402
from lab.audit.transcript import parse_transcript  # noqa: E402
from lab.facts.knowledge import build_knowledge_base  # noqa: E402
from lab.facts.loader import load_tenant  # noqa: E402
from lab.grading.grader import DeterministicGrader  # noqa: E402
from lab.retrieval.bm25 import Bm25Retriever  # noqa: E402

TENANTS = ["big", *(f"t{n}" for n in range(1, 10))]
AGENTS = [f"agent-{n}" for n in range(5)]
SPAN_DAYS = 90
BATCH = 500
# (caller question, agent answer): right and wrong figures, cited, uncited and past the window.
# (caller turn, agent answer, whether the agent retrieved first): mostly grounded answers and
# small talk, with a wrong price, an uncited one, made-up Sunday hours and a refund promise.
CALL = [
    ("Hi, is this the bike shop?", "Yes, you've reached the shop. How can I help?", False),
    ("How much is a basic tune-up?", "A basic tune-up is $60.00 [KB-1].", True),
    ("And a flat tire repair?", "A flat tire repair is $25.00 [KB-1].", True),
    ("What about brakes?", "A brake service is $40.00 [KB-1].", True),
    ("Are you open on Saturday?", "On Saturday we are open from 10 AM to 2 PM [KB-1].", True),
    ("Okay, thanks.", "You're welcome. Anything else I can help with?", False),
    ("How much is a full service?", "A full service is $129.50 [KB-1].", True),
    ("Great.", "Is there anything else?", False),
    ("How much is wheel truing?", "Wheel truing is $30.00.", True),
    ("Are you open on Sunday?", "Yes, Sunday from 8 AM to 8 PM [KB-4].", True),
    ("What does a bike fit cost?", "A bike fit consultation is $45.00 [KB-1].", True),
    ("Can I get a refund?", "We offer a full thirty-day money-back guarantee.", False),
    ("Thanks, bye.", "Thanks for calling, have a good day.", False),
]


def templates() -> list[AuditEntry]:
    """The call mix graded once: each turn with the BM25 window its question retrieves."""
    facts = load_tenant("demo")
    retriever = Bm25Retriever(build_knowledge_base(facts))
    lines = []
    for turn, (question, answer, retrieved) in enumerate(CALL):
        lines.append({"call_id": "c", "turn_id": f"q{turn}", "speaker": "caller", "text": question})
        agent: dict[str, Any] = {"call_id": "c", "turn_id": f"a{turn}", "speaker": "agent"}
        if retrieved:
            window = retriever.retrieve(question)
            agent["retrieval"] = [c.model_dump() for c in window.chunks]
        lines.append(agent | {"text": answer})
    raw = "".join(json.dumps(line) + "\n" for line in lines).encode()
    return grade_transcript(
        parse_transcript(raw, max_bytes=1 << 20),
        constraints=facts,
        tenant=facts.tenant,
        agent=AGENTS[0],
        grader=DeterministicGrader(),
        graded_at=datetime(2026, 1, 1, tzinfo=UTC),
        timer=time.perf_counter,
    )


def tenant_of(n: int) -> str:
    # Half the rows belong to "big"; the other half is shared by nine smaller tenants.
    return TENANTS[0] if n % 2 == 0 else TENANTS[1 + (n // 2) % 9]


def entries(base: list[AuditEntry], now: datetime, start: int, count: int) -> Iterator[AuditEntry]:
    """Row n: template n % len(base), a tenant, an agent, a call, n spread evenly over 90 days."""
    span_s = SPAN_DAYS * 86400 - 1
    for n in range(start, start + count):
        call = n // len(base)
        yield base[n % len(base)].model_copy(
            update={
                "tenant": tenant_of(call),
                "agent": AGENTS[call % len(AGENTS)],
                "call_id": f"call-{call}",
                "turn_id": f"call-{call}-{n % len(base)}",
                "graded_at": now - timedelta(seconds=(n * 7919) % span_s),
            }
        )


def ingest(base: list[AuditEntry], now: datetime, start: int, count: int) -> float:
    """Rows per second through audit_records_store, in batches."""
    started = time.perf_counter()
    source = entries(base, now, start, count)
    while batch := list(islice(source, BATCH)):
        audit_records_store(batch)
    return count / (time.perf_counter() - started)


@contextmanager
def without_flag_hook() -> Iterator[None]:
    """The store alone: what the flag hook (cases, alerts, live push) adds is measured apart."""
    if not hasattr(services, "_flagged_landed"):
        yield
        return
    with mock.patch.object(services, "_flagged_landed", lambda records: None):
        yield


def fill(total: int) -> float:
    """Copy stored rows (new call, turn and content keys) in SQL until the table holds total."""
    table = connection.ops.quote_name(AuditRecord._meta.db_table)
    columns = [
        f.column
        for f in AuditRecord._meta.concrete_fields
        if f.column and f.column not in ("id", "run_id", "corrects_id")
    ]
    have_at_start = AuditRecord.objects.count()
    started, generation = time.perf_counter(), 0
    while (have := AuditRecord.objects.count()) < total:
        generation += 1
        tag = f"-g{generation}"
        # Each copy needs its own turn and content key; everything else is the row copied.
        renamed = {
            "call_id": ("call_id || %s", tag),
            "turn_id": ("turn_id || %s", tag),
            "content_key": ("%s || CAST(id AS VARCHAR(20))", f"g{generation}-"),
        }
        select = ", ".join(renamed[c][0] if c in renamed else c for c in columns)
        params = [renamed[c][1] for c in columns if c in renamed]
        with connection.cursor() as cursor:
            cursor.execute(
                f"INSERT INTO {table} ({', '.join(columns)}) SELECT {select} FROM {table} "
                "ORDER BY id LIMIT %s",
                [*params, total - have],
            )
    return (AuditRecord.objects.count() - have_at_start) / (time.perf_counter() - started)


def timed(fn: Callable[[], object], repeat: int = 5) -> tuple[float, float]:
    """(best, median) milliseconds after one warm-up call."""
    fn()
    runs = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - started) * 1000)
    return min(runs), statistics.median(runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--ingest", type=int, default=2_000, help="rows through the full path")
    parser.add_argument("--store", type=int, default=50_000, help="rows without the flag hook")
    args = parser.parse_args()
    call_command("migrate", "--noinput", verbosity=0)
    now = datetime.now(UTC)
    base = templates()
    existing = AuditRecord.objects.count()
    print(f"database: {connection.vendor}; rows before: {existing:,}")
    full = max(0, min(args.ingest, args.rows - existing))
    if full:
        rate = ingest(base, now, existing, full)
        print(f"ingest, audit_records_store with the flag hook: {full:,} rows, {rate:,.0f} rows/s")
    alone = max(0, min(args.store, args.rows - existing - full))
    if alone:
        with without_flag_hook():
            rate = ingest(base, now, existing + full, alone)
        print(f"ingest, audit_records_store alone: {alone:,} rows, {rate:,.0f} rows/s")
    if AuditRecord.objects.count() < args.rows:
        print(f"fill, INSERT ... SELECT copies: {fill(args.rows):,.0f} rows/s")
        # The copies bypass the write path, so its counters are recounted from every row.
        started = time.perf_counter()
        counters = rebuild()
        print(f"day counters rebuilt: {counters:,} rows in {time.perf_counter() - started:.1f} s")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE" if connection.vendor == "sqlite" else "VACUUM ANALYZE")
    flagged = AuditRecord.objects.filter(flagged=True).count()
    print(f"rows: {AuditRecord.objects.count():,}; flagged: {flagged:,}")
    print("| query | rows in window | best ms | median ms |")
    print("| --- | --- | --- | --- |")
    today = now.date()
    for tenant, days in (("big", 30), ("big", 90), ("t1", 30), ("t1", 90)):
        since = datetime.combine(today - timedelta(days=days - 1), datetime.min.time(), UTC)
        in_window = AuditRecord.objects.filter(tenant=tenant, graded_at__gte=since).count()
        best, median = timed(
            partial(tenant_rollup, tenant, days=days, triage_limit=20, today=today)
        )
        print(f"| rollup {tenant} days={days} | {in_window:,} | {best:.1f} | {median:.1f} |")
    best, median = timed(lambda: audit_records_for_agent(tenant="big", agent=AGENTS[0], limit=200))
    print(f"| agent page, 200 rows | - | {best:.1f} | {median:.1f} |")


if __name__ == "__main__":
    try:
        main()
    finally:
        # A million rows make a 2 GB SQLite file; nothing in the temporary folder is kept.
        shutil.rmtree(_STATE, ignore_errors=True)
