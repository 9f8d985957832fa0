from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from lab.grading.grounding import (
    FALLBACK,
    GroundingVerdict,
    audit,
    markers,
    require_citation,
    strip_markers,
)
from lab.retrieval.window import RetrievalWindow, RetrievedChunk

WORDS = st.sampled_from(["A", "tune-up", "is", "$60.00.", "We", "open", "at", "9", "[x]", "ok,"])


def window(size: int | None) -> RetrievalWindow | None:
    if size is None:
        return None
    chunks = tuple(
        RetrievedChunk(id=f"c{n}", text=f"chunk {n}", score=10.0 - n) for n in range(size)
    )
    return RetrievalWindow(query="q", chunks=chunks)


@st.composite
def turns(draw: st.DrawFn) -> tuple[str, list[int], int | None]:
    """An utterance with [KB-N] markers spliced between its words, the markers, a window size."""
    words = draw(st.lists(WORDS, max_size=12))
    cited = draw(st.lists(st.integers(min_value=0, max_value=8), max_size=4))
    for n in cited:
        words.insert(draw(st.integers(min_value=0, max_value=len(words))), f"[KB-{n}]")
    return " ".join(words), cited, draw(st.none() | st.integers(min_value=0, max_value=6))


def expected(cited: list[int], size: int | None) -> GroundingVerdict:
    """The seed's definition, written out case by case."""
    retrieved = size or 0
    valid = [n for n in cited if 1 <= n <= retrieved]
    if not cited:
        return GroundingVerdict.NO_MARKER if retrieved else GroundingVerdict.EMPTY_RETRIEVAL
    if not retrieved:
        return GroundingVerdict.ORPHAN_MARKER
    return GroundingVerdict.OK if valid else GroundingVerdict.ORPHAN_MARKER


@settings(max_examples=400, deadline=None)
@given(turns())
def test_the_grounding_verdict_follows_the_definition(turn):
    text, cited, size = turn
    result = audit(text, window(size))
    assert result.verdict is expected(cited, size)
    assert sorted(result.markers) == sorted(set(cited))
    valid = {n for n in cited if 1 <= n <= (size or 0)}
    assert sorted(result.cited) == sorted(f"c{n - 1}" for n in valid)
    assert set(result.orphans) == set(cited) - valid
    assert [r.id for r in result.retrieved] == [f"c{n}" for n in range(size or 0)]
    assert result.confidence == (None if size is None else (10.0 if size else 0.0))


@settings(max_examples=400, deadline=None)
@given(turns(), st.booleans())
def test_require_citation_blocks_exactly_the_uncited_turns_that_had_retrieval(turn, required):
    text, cited, size = turn
    decision = require_citation(text, window(size), required=required)
    grounded = bool(size) and not any(1 <= n <= size for n in cited)
    assert decision.allowed is not (required and grounded)
    if decision.allowed:
        assert decision.spoken == strip_markers(text) and decision.blocked_text is None
    else:
        assert (decision.spoken, decision.blocked_text) == (FALLBACK, text)
        assert decision.reason_kind == ("orphan_marker" if cited else "no_marker")


@settings(max_examples=300, deadline=None)
@given(turns())
def test_stripped_text_speaks_no_marker_and_keeps_every_word(turn):
    text, _, _ = turn
    spoken = strip_markers(text)
    assert "[KB" not in spoken and markers(spoken) == []
    assert spoken.split() == [w for w in text.split() if not w.startswith("[KB-")]


@given(st.text(alphabet=st.characters(blacklist_characters="[]"), max_size=40))
def test_text_without_markers_is_spoken_as_written(text):
    assert strip_markers(text) == text.strip()


def test_malformed_markers_do_not_count_but_are_recorded_and_never_spoken():
    text = "A tune-up is $60 [kb-1] and a full service $129.50 [KB 2][KB-]."
    result = audit(text, window(2))
    assert result.verdict is GroundingVerdict.NO_MARKER
    assert result.malformed == ("[kb-1]", "[KB 2]", "[KB-]")
    assert strip_markers(text) == "A tune-up is $60 and a full service $129.50."


def test_a_marker_past_the_window_is_an_orphan_even_beside_a_valid_one():
    result = audit("Open at 8:30 [KB-1], closed Sunday [KB-4].", window(2))
    assert result.verdict is GroundingVerdict.OK
    assert (result.cited, result.orphans) == (("c0",), (4,))


def test_a_greeting_without_retrieval_is_empty_retrieval_with_no_confidence():
    result = audit("Hello, how can I help?", None)
    assert result.verdict is GroundingVerdict.EMPTY_RETRIEVAL and result.confidence is None


def test_a_blocked_turn_can_fall_back_to_a_hand_off():
    handoff = "I'll pass your question to the shop team, who will call you back."
    decision = require_citation("It's $60.", window(1), required=True, fallback=handoff)
    assert not decision.allowed and decision.spoken == handoff
    assert decision.reason == "retrieval ran and the answer cites none of its chunks"
