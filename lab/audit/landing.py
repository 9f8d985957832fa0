"""What a newly stored flag sets off, without the audit layer knowing who listens.

Higher layers subscribe at app start (the operator's queue opens cases, the alerts app fills its
outbox); the audit services call `flagged_landed` inside the transaction that inserts the rows,
so everything a listener writes commits with them or not at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lab.audit.models import AuditRecord

Listener = Callable[[Sequence[AuditRecord]], Any]

# (order, name) → listener: a listener that reads another's rows subscribes after it.
_listeners: dict[tuple[int, str], Listener] = {}


def subscribe(name: str, listener: Listener, *, order: int) -> None:
    """Call listener with every batch of newly stored flagged rows; subscribing twice is one."""
    for key in [key for key in _listeners if key[1] == name]:
        del _listeners[key]
    _listeners[(order, name)] = listener


def subscribers() -> list[str]:
    """The listeners' names in the order they are called."""
    return [name for _, name in sorted(_listeners)]


def flagged_landed(records: Sequence[AuditRecord]) -> None:
    """Hand rows this transaction inserted to every listener, the flagged ones only."""
    flagged = [r for r in records if r.flagged]
    if not flagged:
        return
    for key in sorted(_listeners):
        _listeners[key](flagged)
