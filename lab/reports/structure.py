"""Reading an untrusted report file: size, encoding, shape, JSON, numbers, text, schema.

Pure: no Django, no I/O. Every refusal is a Finding with a fixed kind and a reason that names
the problem; nothing here raises on bad input.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import dataclass
from itertools import accumulate
from typing import Any

from pydantic import ValidationError

from lab.reports.findings import Finding
from lab.reports.schema import SCHEMA_VERSION, Report

MAX_REPORT_BYTES = 10 * 1024 * 1024
# A report nests about seven levels deep (report, events, event, payload, request, args).
MAX_DEPTH = 32
# A 10 MB report of real runs holds about 60,000 arrays and objects and 300,000 values; these
# caps leave room above that and refuse floods of tiny values before anything parses them.
MAX_CONTAINERS = 200_000
MAX_VALUES = 600_000
# Numbers a report may hold: RFC 8785 (I-JSON) integers, and finite floats.
MAX_SAFE_INTEGER = 2**53 - 1
# Beyond this many schema errors the rest are counted, not listed; beyond the second figure
# they are not even read out (that alone would take seconds), only counted.
MAX_LISTED_ERRORS = 100
MAX_READ_ERRORS = 50_000

_ESCAPE = re.compile(rb"\\.", re.DOTALL)
# With escapes gone a string cannot contain '"', so this pattern cannot backtrack.
_STRING = re.compile(rb'"[^"]*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEP = [0] * 256
_STEP[ord("[")] = _STEP[ord("{")] = 1
_STEP[ord("]")] = _STEP[ord("}")] = -1
# The only escapes that decode to text the lab refuses: a UTF-16 surrogate (it may be unpaired)
# and NUL (raw JSON cannot hold either unescaped).
_SUSPECT_ESCAPE = re.compile(rb"\\u(?:[dD][89a-fA-F]|0000)")


@dataclass(frozen=True, slots=True)
class Parsed:
    """A report that passed structure validation: the model and the JSON it was read from."""

    report: Report
    document: dict[str, Any]


class _DuplicateKey(Exception):
    pass


class _NotJsonConstant(Exception):
    pass


class _BadNumber(Exception):
    pass


@dataclass(frozen=True, slots=True)
class Shape:
    """What raw JSON holds, counted without parsing it: nesting, containers, values."""

    depth: int
    containers: int
    values: int


def _outside_strings(raw: bytes) -> bytes:
    return _STRING.sub(b"", _ESCAPE.sub(b"", raw))


def _depth(structure: bytes) -> int:
    brackets = structure.translate(None, _NOT_BRACKETS)
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0)


def nesting_depth(raw: bytes) -> int:
    """How deeply arrays and objects nest in raw JSON, counted without parsing it."""
    return _depth(_outside_strings(raw))


def json_shape(raw: bytes) -> Shape:
    """Depth, arrays and objects, and (about) how many values raw holds; all on the raw bytes."""
    structure = _outside_strings(raw)
    containers = structure.count(b"[") + structure.count(b"{")
    # Every value but the first in an array or object follows a comma.
    return Shape(_depth(structure), containers, structure.count(b",") + containers + 1)


def _integer(token: str) -> int:
    # The digits are counted first: int() itself raises beyond 4,300 of them.
    digits = len(token.lstrip("-"))
    if digits > 16:
        raise _BadNumber(f"an integer of {digits:,} digits")
    if abs(value := int(token)) > MAX_SAFE_INTEGER:
        raise _BadNumber(f"the integer {token}")
    return value


def _float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise _BadNumber(f"the number {token[:40]}")
    return value


def _first_bad_text(value: Any) -> str | None:
    """The first string (or key) in value that is not Unicode text the lab can store."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            if "\x00" in item:
                return "holds U+0000 (NUL), which no report text needs and databases refuse"
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as error:
                code = ord(item[error.start])
                return f"holds an unpaired surrogate (U+{code:04X}), so it is not Unicode text"
    return None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document = dict(pairs)
    if len(document) != len(pairs):
        counts = Counter(key for key, _ in pairs)
        raise _DuplicateKey(next(key for key, count in counts.items() if count > 1))
    return document


def _reject_constant(name: str) -> Any:
    raise _NotJsonConstant(name)


def _json_type(value: Any) -> str:
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number")


def _path(location: tuple[str | int, ...]) -> str:
    text = ""
    for part in location:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(document)"


def _schema_findings(error: ValidationError) -> list[Finding]:
    count = error.error_count()
    if count > MAX_READ_ERRORS:
        return [Finding("schema", f"{count:,} schema errors: this is not a lab report")]
    problems = error.errors(include_url=False, include_input=False, include_context=False)
    findings = [
        Finding("schema", f"{_path(p['loc'])}: {p['msg']}") for p in problems[:MAX_LISTED_ERRORS]
    ]
    if len(problems) > MAX_LISTED_ERRORS:
        more = len(problems) - MAX_LISTED_ERRORS
        findings.append(Finding("schema", f"and {more:,} more schema errors like these"))
    return findings


def _decode_problem(text: str, error: json.JSONDecodeError) -> Finding:
    if not text.strip():
        return Finding("not_json", "the file is empty")
    if text.startswith("\ufeff"):
        return Finding("not_json", "the file starts with a byte-order mark; JSON must not")
    where = f"line {error.lineno}, column {error.colno}"
    if not text[error.pos :].strip() or error.msg.startswith("Unterminated string"):
        return Finding("truncated", f"the JSON ends early at {where} (is the file truncated?)")
    return Finding("not_json", f"not valid JSON at {where}: {error.msg}")


def _load(raw: bytes, max_bytes: int | None) -> tuple[Any, list[Finding]]:
    """The raw bytes as JSON values, or the findings that refuse them."""
    if max_bytes is not None and len(raw) > max_bytes:
        return None, [
            Finding(
                "too_large",
                f"the file is larger than the {max_bytes:,}-byte limit ({len(raw):,}+ bytes)",
            )
        ]
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, [Finding("not_utf8", f"the file is not UTF-8 text (byte {error.start:,})")]
    shape = json_shape(raw)
    if shape.depth > MAX_DEPTH:
        return None, [
            Finding(
                "too_deep",
                f"arrays and objects nest {shape.depth:,} deep; a report needs at most {MAX_DEPTH}",
            )
        ]
    if shape.containers > MAX_CONTAINERS or shape.values > MAX_VALUES:
        return None, [
            Finding(
                "too_many_values",
                f"the file holds {shape.containers:,} arrays and objects and about "
                f"{shape.values:,} values; a report holds at most {MAX_CONTAINERS:,} and "
                f"{MAX_VALUES:,}",
            )
        ]
    try:
        document = json.loads(
            text,
            object_pairs_hook=_unique_keys,
            parse_constant=_reject_constant,
            parse_int=_integer,
            parse_float=_float,
        )
    except json.JSONDecodeError as error:
        return None, [_decode_problem(text, error)]
    except _DuplicateKey as error:
        return None, [
            Finding(
                "duplicate_key",
                f"the key {error.args[0]!r} appears twice in one "
                "object, so readers could disagree on its value",
            )
        ]
    except _NotJsonConstant as error:
        return None, [Finding("not_json", f"{error.args[0]} is not a JSON number")]
    except _BadNumber as error:
        return None, [
            Finding(
                "number_out_of_range",
                f"{error.args[0]} is outside the numbers a report may hold (integers within "
                "±(2^53 - 1), finite floats: RFC 8785)",
            )
        ]
    except RecursionError:
        return None, [Finding("too_deep", "arrays and objects nest too deeply to read")]
    if _SUSPECT_ESCAPE.search(raw) and (problem := _first_bad_text(document)):
        return None, [Finding("not_text", f"a string {problem}")]
    return document, []


def report_parse(raw: bytes, *, max_bytes: int | None = MAX_REPORT_BYTES) -> Parsed | list[Finding]:
    """The report in raw, or every finding that stops it being read as one."""
    document, findings = _load(raw, max_bytes)
    if findings:
        return findings
    if not isinstance(document, dict):
        return [Finding("not_a_report", f"the top level is {_json_type(document)}, not an object")]
    if "schema_version" not in document:
        return [Finding("not_a_report", "there is no schema_version: this is not a lab report")]
    version = document["schema_version"]
    if type(version) is not int or version != SCHEMA_VERSION:
        return [
            Finding(
                "unknown_schema_version",
                f"schema_version {json.dumps(version)[:40]} is unknown; this lab reads "
                f"version {SCHEMA_VERSION}",
            )
        ]
    try:
        # Strict: "1" is not a number and 1 is not true; the JSON must say what it means.
        report = Report.model_validate_json(raw, strict=True)
    except ValidationError as error:
        return _schema_findings(error)
    return Parsed(report=report, document=document)
