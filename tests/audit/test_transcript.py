from __future__ import annotations

import pytest

from lab.audit.transcript import MAX_CHUNKS, MAX_LINE_BYTES, TranscriptError, parse_transcript
from tests.audit.calls import demo_calls, jsonl

LIMIT = 1024 * 1024
CALLER = {"call_id": "c1", "turn_id": "t1", "speaker": "caller", "text": "How much?"}
AGENT = {"call_id": "c1", "turn_id": "t2", "speaker": "agent", "text": "It is $60.00 [KB-1]."}


def refused(raw: bytes, max_bytes: int = LIMIT) -> TranscriptError:
    with pytest.raises(TranscriptError) as caught:
        parse_transcript(raw, max_bytes=max_bytes)
    return caught.value


def with_agent(**changes: object) -> bytes:
    return jsonl([CALLER, {**AGENT, **changes}])


def test_each_agent_turn_gets_the_caller_turn_before_it_in_its_own_call():
    lines = [
        CALLER,
        {"call_id": "c2", "turn_id": "t1", "speaker": "caller", "text": "Open Sunday?"},
        AGENT,
        {"call_id": "c2", "turn_id": "t2", "speaker": "agent", "text": "We are closed."},
        {"call_id": "c3", "turn_id": "t1", "speaker": "agent", "text": "Hello!"},
    ]
    turns = parse_transcript(jsonl(lines), max_bytes=LIMIT)
    assert [(t.line, t.call_id, t.caller_turn) for t in turns] == [
        (3, "c1", "How much?"),
        (4, "c2", "Open Sunday?"),
        (5, "c3", None),
    ]


def test_retrieval_becomes_the_turns_window_and_absent_retrieval_is_none_not_empty():
    raw = with_agent(retrieval=[{"id": "a", "text": "A costs $60.00.", "score": 3}])
    (turn,) = parse_transcript(raw, max_bytes=LIMIT)
    assert turn.retrieval is not None and turn.retrieval.retriever == "external"
    assert [(c.id, c.score) for c in turn.retrieval.chunks] == [("a", 3.0)]
    (bare,) = parse_transcript(with_agent(), max_bytes=LIMIT)
    assert bare.retrieval is None
    (empty,) = parse_transcript(with_agent(retrieval=[]), max_bytes=LIMIT)
    assert empty.retrieval is not None and empty.retrieval.chunks == ()


def test_blank_lines_are_skipped_and_line_numbers_stay_those_of_the_file():
    raw = b"\n" + jsonl([CALLER]) + b"   \n" + jsonl([{**AGENT, "speaker": "robot"}])
    error = refused(raw)
    assert error.line == 4


@pytest.mark.parametrize(
    ("raw", "line", "words"),
    [
        (jsonl([CALLER]) + b'{"call_id": "c1", "turn_id": \n', 2, "not a JSON object"),
        (jsonl([CALLER]) + b"[1, 2]\n", 2, "expected a JSON object"),
        (
            jsonl([CALLER, {k: v for k, v in AGENT.items() if k != "text"}]),
            2,
            "missing field 'text'",
        ),
        (with_agent(speaker="bot"), 2, "speaker: Input should be 'caller' or 'agent' (got 'bot')"),
        (with_agent(retreival=[]), 2, "unknown field 'retreival'"),
        (with_agent(turn_id="turn 7"), 2, "turn_id"),
        (with_agent(text=""), 2, "text"),
        (with_agent(retrieval=[{"id": "a", "text": "x", "score": "0.9"}]), 2, "retrieval[0].score"),
        (with_agent(retrieval=[{"id": "a", "text": "x", "score": True}]), 2, "retrieval[0].score"),
        (
            jsonl([CALLER]) + b'{"call_id":"c1","turn_id":"t2","speaker":"agent","text":"x",'
            b'"retrieval":[{"id":"a","text":"x","score":NaN}]}',
            2,
            "finite number",
        ),
        (with_agent(retrieval=[{"id": "", "text": "x", "score": 1}]), 2, "retrieval[0].id"),
        (with_agent(retrieval={"id": "a"}), 2, "retrieval"),
        (jsonl([{**CALLER, "retrieval": []}, AGENT]), 1, "retrieval is only for agent turns"),
        (jsonl([CALLER, AGENT, {**AGENT, "text": "Again."}]), 3, "already appeared on line 2"),
        (jsonl([CALLER]) + b"\xff\xfe\n", 2, "not UTF-8"),
    ],
)
def test_bad_input_names_the_line_and_what_is_wrong(raw: bytes, line: int, words: str):
    error = refused(raw)
    assert error.line == line
    assert words in error.message
    assert str(error).startswith(f"line {line}: ")


def test_too_many_chunks_are_refused():
    chunks = [{"id": f"c{i}", "text": "x", "score": 1.0} for i in range(MAX_CHUNKS + 1)]
    error = refused(with_agent(retrieval=chunks))
    assert (error.line, "retrieval") == (2, error.message.split(":")[0])


def test_an_oversized_line_and_an_oversized_file_are_refused():
    long_line = with_agent(text="word " * (MAX_LINE_BYTES // 5))
    error = refused(long_line)
    assert error.line == 2 and "over the limit" in error.message
    whole = jsonl(demo_calls()[0])
    error = refused(whole, max_bytes=len(whole) - 1)
    assert error.line is None and f"{len(whole) - 1:,} bytes" in error.message


def test_a_file_without_agent_turns_is_refused():
    assert "no agent turns" in refused(jsonl([CALLER])).message
    assert "no agent turns" in refused(b"").message


def test_every_line_of_the_built_calls_parses():
    lines, expected = demo_calls()
    turns = parse_transcript(jsonl(lines), max_bytes=LIMIT)
    assert [t.turn_id for t in turns] == [e.turn_id for e in expected]
