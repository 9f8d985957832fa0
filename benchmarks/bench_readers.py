"""The lab's reader of spoken amounts and times beside Duckling, on the understanding corpora.

For every corpus entry that names an amount or a clock time, each reader's value is checked
against the corpus label (an amount the caller must be asked about counts as right only when
the reader leaves it open), and each reader's time per parse is measured. Duckling is not a
dependency of the lab; install it somewhere apart to run this, e.g.
  pip install --no-deps --target /tmp/duck pyduckling-native-phihos==0.3.0
  PYTHONPATH=$PWD:/tmp/duck .venv/bin/python -m benchmarks.bench_readers
"""

from __future__ import annotations

import importlib
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from datetime import time as clock
from typing import Any

from lab.scripted.setup import calendar_week
from tests.language.phrasebook import Entry, load, load_heldout

TIME_KEYS = ("time", "around", "after", "before")
Reading = dict[str, str | int | None]


@dataclass(frozen=True)
class Score:
    right: int
    total: int
    ms: list[float]

    def line(self, name: str) -> str:
        p50 = statistics.median(self.ms)
        share = self.right / self.total
        return f"{name:<10} {self.right:>3}/{self.total:<3} {share:6.1%}  {p50:.3f} ms p50"


def labelled(entries: list[Entry]) -> list[tuple[Entry, Reading]]:
    """Entries whose label names an amount or a time, with the values the label expects."""
    found = []
    for entry in entries:
        args = entry.expect.args or {}
        want: Reading = {key: args[key] for key in ("amount_cents", *TIME_KEYS) if key in args}
        want |= {key: None for key in entry.expect.ambiguous if key == "amount_cents"}
        if want:
            found.append((entry, want))
    return found


def lab_reader(entry: Entry) -> Reading:
    understood = entry.understand()
    got: Reading = {key: value for key, value in understood.args.items() if key != "day"}
    return got | {key: None for key in understood.ambiguous}


def duckling_reader() -> Callable[[Entry], Reading]:
    duckling: Any = importlib.import_module("duckling")
    zones = duckling.load_time_zones("/usr/share/zoneinfo")
    monday = datetime.combine(calendar_week().start, clock(9), tzinfo=UTC)
    context = duckling.Context(
        duckling.parse_ref_time(zones, "UTC", int(monday.timestamp())),
        duckling.default_locale_lang(duckling.parse_lang("EN")),
    )
    dimensions = duckling.parse_dimensions(["amount-of-money", "time"])

    def read(entry: Entry) -> Reading:
        got: Reading = {}
        for found in duckling.parse(entry.text, context, dimensions, False):
            value = found["value"]
            if found["dim"] == "amount-of-money" and "amount_cents" not in got:
                amount = value.get("value")
                got["amount_cents"] = None if amount is None else round(amount * 100)
            elif found["dim"] == "time" and value.get("type") == "value":
                if value.get("grain") in ("hour", "minute"):
                    got.setdefault("time", _hhmm(value["value"]))
            elif found["dim"] == "time" and value.get("type") == "interval":
                if "from" in value:
                    got.setdefault("after", _hhmm(value["from"]["value"]))
                if "to" in value:
                    got.setdefault("before", _hhmm(value["to"]["value"]))
        return got

    return read


def _hhmm(stamp: str) -> str:
    # Duckling reads "half two" as 02:30; the lab's calendar books small hours in the afternoon.
    at = datetime.fromisoformat(stamp)
    hour = at.hour + 12 if 1 <= at.hour <= 6 else at.hour
    return f"{hour:02d}:{at.minute:02d}"


def score(read: Callable[[Entry], Reading], cases: list[tuple[Entry, Reading]]) -> Score:
    right, ms = 0, []
    for entry, want in cases:
        started = time.perf_counter()
        got = read(entry)
        ms.append((time.perf_counter() - started) * 1000)
        # "around" and "time" are one clock said loosely or not; either key names it.
        loose = {("time" if key == "around" else key): value for key, value in got.items()}
        wanted = {("time" if key == "around" else key): value for key, value in want.items()}
        right += all(loose.get(key, "missing") == value for key, value in wanted.items())
    return Score(right, len(cases), ms)


def main() -> None:
    corpora = {
        "corpus": load(),
        "held out": load_heldout(),
        "held out (frozen)": load_heldout("heldout_frozen"),
    }
    try:
        duckling = duckling_reader()
    except ModuleNotFoundError:
        duckling = None
        print("duckling is not installed: only the lab's reader is measured")
    for name, entries in corpora.items():
        cases = labelled(entries)
        print(f"\n{name}: {len(cases)} entries naming an amount or a time")
        print("  " + score(lab_reader, cases).line("lab"))
        if duckling is not None:
            print("  " + score(duckling, cases).line("duckling"))


if __name__ == "__main__":
    main()
