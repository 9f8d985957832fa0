"""Stated beside derived: the leaves where two JSON values differ, for every check that compares.

Pure: no Django, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from lab.reports.results import Difference


def as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return ", ".join(value) if value else "(none)"
    return json.dumps(value, ensure_ascii=False)


def tree_differences(path: str, stated: Any, derived: Any) -> Iterator[Difference]:
    """The leaves where two JSON values differ; lists of unequal length differ as a whole."""
    if stated == derived and type(stated) is type(derived):
        return
    if isinstance(stated, dict) and isinstance(derived, dict):
        for key in [*stated, *(k for k in derived if k not in stated)]:
            yield from tree_differences(
                f"{path}.{key}", stated.get(key, "(absent)"), derived.get(key, "(absent)")
            )
    elif isinstance(stated, list) and isinstance(derived, list) and len(stated) == len(derived):
        is_ids = all(isinstance(item, str) for item in stated + derived)
        if is_ids:
            yield Difference(path, as_text(stated), as_text(derived))
            return
        for index, (left, right) in enumerate(zip(stated, derived, strict=True)):
            yield from tree_differences(f"{path}[{index}]", left, right)
    else:
        yield Difference(path, as_text(stated), as_text(derived))
