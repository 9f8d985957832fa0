"""The recognition queue: finals first, speculation superseded or shed, nothing dropped."""

from __future__ import annotations

import pytest

from lab.speech.scheduling import JobState, RecognitionQueue

TTL = 0.3


def drain(queue: RecognitionQueue, *, at: float) -> list[int]:
    taken = []
    while (job := queue.take(at=at)) is not None:
        taken.append(job.job_id)
    return taken


def test_a_final_decode_runs_before_speculation_queued_ahead_of_it():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=False, at=0.0)
    queue.submit(job_id=2, stream="b", final=False, at=0.0)
    queue.submit(job_id=3, stream="c", final=True, at=0.1)
    assert drain(queue, at=0.1) == [3, 1, 2]


def test_finals_run_in_the_order_they_arrived_and_speculation_in_its_own():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    for job_id, stream, final in [(1, "a", True), (2, "b", False), (3, "c", True), (4, "d", False)]:
        queue.submit(job_id=job_id, stream=stream, final=final, at=0.0)
    assert drain(queue, at=0.0) == [1, 3, 2, 4]


def test_speculation_promoted_by_its_decided_turn_overtakes_other_speculation():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=False, at=0.0)
    queue.submit(job_id=2, stream="b", final=False, at=0.0)
    promoted = queue.promote("b")
    assert [job.job_id for job in promoted] == [2]
    assert drain(queue, at=0.0) == [2, 1]


def test_a_promoted_decode_queues_behind_finals_that_were_final_before_it():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=False, at=0.0)
    queue.submit(job_id=2, stream="b", final=True, at=0.05)
    queue.promote("a")
    assert drain(queue, at=0.1) == [2, 1]


def test_a_newer_decode_of_the_same_stream_parks_its_older_speculation():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=False, at=0.0)
    queue.submit(job_id=2, stream="a", final=True, at=0.1)
    older = queue.job(1)
    assert older is not None and older.state is JobState.PARKED
    assert older.shed_because == "superseded by a newer decode of its stream"
    assert drain(queue, at=0.1) == [2]
    assert len(queue) == 1  # parked, not dropped: its owner still holds it


def test_a_newer_speculation_supersedes_the_older_one_too():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=False, at=0.0)
    queue.submit(job_id=2, stream="a", final=False, at=0.1)
    assert drain(queue, at=0.1) == [2]


def test_another_streams_speculation_is_not_superseded():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=False, at=0.0)
    queue.submit(job_id=2, stream="b", final=False, at=0.0)
    assert drain(queue, at=0.0) == [1, 2]


def test_a_final_is_never_superseded_by_its_streams_next_segment():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=True, at=0.0)
    queue.submit(job_id=2, stream="a", final=False, at=0.1)
    assert drain(queue, at=0.1) == [1, 2]


def test_under_load_speculation_that_waited_past_its_use_yields_to_fresh_speculation():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=False, at=0.0)
    queue.submit(job_id=2, stream="b", final=False, at=0.2)
    # The thread was busy until 0.4 s: the first waited 0.4 s, past the 0.3 s it was good for.
    fresh = queue.take(at=0.4)
    assert fresh is not None and fresh.job_id == 2
    shed = queue.job(1)
    assert shed is not None and shed.state is JobState.DEFERRED
    assert shed.shed_because == "waited past its use as speculation"
    # An idle thread still runs it: its turn is likely to be decided on these words.
    assert drain(queue, at=0.4) == [1]


def test_a_final_overtakes_deferred_speculation():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=False, at=0.0)
    queue.submit(job_id=2, stream="b", final=True, at=0.35)
    assert drain(queue, at=0.4) == [2, 1]


def test_speculation_taken_in_time_is_not_shed():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=False, at=0.0)
    assert drain(queue, at=TTL) == [1]


def test_a_final_is_never_shed_however_long_it_waited():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=True, at=0.0)
    assert drain(queue, at=60.0) == [1]


def test_deferred_speculation_promoted_by_its_turn_overtakes_fresh_speculation():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=False, at=0.0)
    queue.submit(job_id=2, stream="b", final=False, at=0.9)
    assert queue.take(at=1.0) is not None  # 2: fresh, while 1 is deferred
    queue.submit(job_id=3, stream="c", final=False, at=1.0)
    queue.promote("a")
    job = queue.take(at=1.0)
    assert job is not None and job.job_id == 1 and job.final


def test_superseded_speculation_waits_for_its_turn_even_on_an_idle_thread():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=False, at=0.0)
    queue.submit(job_id=2, stream="a", final=False, at=0.0)
    assert drain(queue, at=0.0) == [2]
    assert queue.take(at=5.0) is None
    queue.promote("a")
    job = queue.take(at=5.0)
    assert job is not None and job.job_id == 1 and job.final


def test_a_cancelled_recognition_is_never_taken():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=True, at=0.0)
    queue.submit(job_id=2, stream="b", final=True, at=0.0)
    assert queue.cancel(1)
    assert not queue.cancel(1)
    assert drain(queue, at=0.0) == [2]


def test_a_parked_recognition_can_be_cancelled():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=False, at=0.0)
    queue.submit(job_id=2, stream="a", final=False, at=0.1)
    assert queue.cancel(1)
    queue.promote("a")
    assert drain(queue, at=0.1) == [2]
    assert len(queue) == 0


def test_promoting_a_stream_with_nothing_waiting_changes_nothing():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=False, at=0.0)
    assert queue.promote("b") == []
    job = queue.take(at=0.0)
    assert job is not None and not job.final


def test_the_same_recognition_cannot_be_queued_twice():
    queue = RecognitionQueue(speculative_ttl_s=TTL)
    queue.submit(job_id=1, stream="a", final=True, at=0.0)
    with pytest.raises(ValueError, match="already queued"):
        queue.submit(job_id=1, stream="b", final=True, at=0.0)


def test_a_queue_without_a_positive_ttl_is_refused():
    with pytest.raises(ValueError, match="positive"):
        RecognitionQueue(speculative_ttl_s=0)


def test_an_empty_queue_has_nothing_to_take():
    assert RecognitionQueue(speculative_ttl_s=TTL).take(at=0.0) is None
