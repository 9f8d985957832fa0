"""The numbers a run hands out (revisions, proposals, attempts), folded from its stored log.

A session rebuilt from the log on another process continues them instead of starting again.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from lab.events.types import CommitStarted, Event, IntentRevised, LookupStarted, ProposalMade


def _number(identifier: str, prefix: str) -> int:
    """N of an id such as p-N or cm-N; 0 for an id the session did not hand out."""
    tail = identifier.removeprefix(prefix)
    return int(tail) if tail.isdecimal() else 0


class RunCounters:
    def __init__(self, events: Iterable[Event] = ()) -> None:
        self._last: Counter[str] = Counter()
        for event in events:
            match event.payload:
                case IntentRevised(revision=revision):
                    self._raise("revision", revision)
                case ProposalMade(proposal_id=proposal_id):
                    self._raise("proposal", _number(proposal_id, "p-"))
                case LookupStarted(revision=revision, attempt=attempt):
                    self._raise(f"lookup-{revision}", attempt)
                    self._last["lookup"] += 1
                case CommitStarted(attempt_id=attempt_id):
                    self._raise("commit", _number(attempt_id, "cm-"))

    def _raise(self, name: str, value: int) -> None:
        self._last[name] = max(self._last[name], value)

    def next(self, name: str) -> int:
        self._last[name] += 1
        return self._last[name]
