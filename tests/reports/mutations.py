"""A deterministic battery of hostile variants of a real report's bytes.

Truncations, type swaps, huge and non-finite numbers, deep nesting, duplicate keys, invalid
UTF-8, byte-order marks, unpaired surrogates and enormous strings: each one a way an upload
has made (or could make) a reader crash instead of answering.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

Path = tuple[str | int, ...]

SWAPS: tuple[Any, ...] = (None, True, 0, -1, 2.5, "", "x" * 300, [], {}, [[]], {"a": {}})
# Raw JSON tokens that no json.dumps value writes.
RAW_TOKENS: tuple[bytes, ...] = (
    b"9" * 5000,
    b"-" + b"9" * 5000,
    b"9007199254740993",
    b"1e400",
    b"-1e400",
    b"1" + b"0" * 400 + b".5",
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b'"\\ud800"',
    b'"\\udc00 tail"',
    b'"\\u0000"',
    b'"' + "é".encode() * 200_000 + b'"',
    b"[" * 40 + b"]" * 40,
    b"[" * 20_000 + b"]" * 20_000,
    b"{" * 200 + b"}" * 200,
    b"[" + b",".join([b"{}"] * 250_000) + b"]",
    b"[" + b",".join([b"0"] * 700_000) + b"]",
)
BYTE_EDITS: tuple[tuple[str, bytes], ...] = (
    ("invalid UTF-8 start byte", b"\xff"),
    ("invalid continuation", b"\xc3\x28"),
    ("overlong slash", b"\xc0\xaf"),
    ("encoded surrogate", b"\xed\xa0\x80"),
    ("NUL byte", b"\x00"),
    ("control character", b"\x01"),
)


def _nodes(value: Any, path: Path = ()) -> Iterator[tuple[Path, Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _nodes(child, (*path, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _nodes(child, (*path, index))


def _set(document: Any, path: Path, value: Any) -> None:
    for key in path[:-1]:
        document = document[key]
    document[path[-1]] = value


def _spread(items: list[Any], count: int) -> list[Any]:
    """count items spread evenly over items, first and last included."""
    if len(items) <= count:
        return items
    step = (len(items) - 1) / (count - 1)
    return [items[round(i * step)] for i in range(count)]


def _with_token(document: dict[str, Any], path: Path, token: bytes) -> bytes:
    marker = "@@mutation@@"
    copy = json.loads(json.dumps(document))
    _set(copy, path, marker)
    return json.dumps(copy).encode().replace(json.dumps(marker).encode(), token, 1)


def mutations(raw: bytes) -> Iterator[tuple[str, bytes]]:
    """(name, bytes) for a few hundred variants of raw, the same ones on every run."""
    document = json.loads(raw)
    paths = [path for path, _ in _nodes(document) if path]
    yield "empty", b""
    yield "whitespace", b" \n\t "
    for top in (b"null", b"[]", b"{}", b"0", b'"report"', b"true", b"[{}]"):
        yield f"top level {top.decode()}", top
    for length in _spread(list(range(1, len(raw))), 30):
        yield f"truncated to {length} bytes", raw[:length]
    for index, path in enumerate(_spread(paths, 60)):
        swap = SWAPS[index % len(SWAPS)]
        copy = json.loads(raw)
        _set(copy, path, swap)
        yield f"{path} := {json.dumps(swap)[:20]}", json.dumps(copy).encode()
    for path in _spread(paths, 8):
        for token in RAW_TOKENS:
            yield (
                f"{path} := {token[:12]!r}… ({len(token):,} bytes)",
                _with_token(document, path, token),
            )
    for name, edit in BYTE_EDITS:
        for at in _spread(list(range(len(raw))), 4):
            yield f"{name} at byte {at}", raw[:at] + edit + raw[at:]
    yield "UTF-8 byte-order mark", b"\xef\xbb\xbf" + raw
    yield "UTF-16", raw.decode().encode("utf-16")
    body = raw.rstrip()
    assert body.endswith(b"}")
    for duplicate in (b'"schema_version": 1', b'"events": []', b'"run_id": "other"'):
        yield f"duplicate key {duplicate[:16]!r}", body[:-1] + b", " + duplicate + b"}"
    first_event = raw.index(b'"seq"')
    yield "duplicate key inside an event", raw[:first_event] + b'"seq": 99, ' + raw[first_event:]
    yield "trailing garbage", raw + b" {}"
    yield "two documents", raw + raw
    yield "enormous key", body[:-1] + b', "' + b"k" * 2_000_000 + b'": 1}'
    yield "enormous string", _with_token(document, ("run_id",), b'"' + b"r" * 5_000_000 + b'"')
