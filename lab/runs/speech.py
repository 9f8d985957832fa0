"""The agent's speech timeline: which utterance is audible when, and what an interruption cut.

Pure: times are plain numbers supplied by the caller (seconds on a monotonic clock).
"""

from __future__ import annotations

from dataclasses import dataclass, replace


@dataclass(frozen=True)
class Scheduled:
    event_id: str
    text: str
    start: float
    end: float
    proposal_id: str | None

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Cut:
    utterance: Scheduled
    heard_fraction: float

    @property
    def heard_text(self) -> str:
        words = self.utterance.text.split()
        return " ".join(words[: round(len(words) * self.heard_fraction)])


class SpeechTimeline:
    """Utterances play one after another; a caller turn cuts whatever is playing or queued."""

    def __init__(self) -> None:
        self.queue: list[Scheduled] = []
        self.starts: dict[str, float] = {}

    def busy_until(self, now: float) -> float:
        return max([now, *(item.end for item in self.queue)])

    def enqueue(
        self, *, event_id: str, text: str, seconds: float, now: float, proposal_id: str | None
    ) -> Scheduled:
        start = self.busy_until(now)
        item = Scheduled(event_id, text, start, start + seconds, proposal_id)
        self.queue.append(item)
        self.starts[event_id] = start
        return item

    def retime(self, event_id: str, *, start: float, seconds: float) -> None:
        """Pin an utterance to when its audio really plays; later ones queue behind it."""
        position = next((i for i, item in enumerate(self.queue) if item.event_id == event_id), None)
        if position is None:
            return
        end = start
        for index in range(position, len(self.queue)):
            item = self.queue[index]
            new_start = start if index == position else max(item.start, end)
            duration = seconds if index == position else item.duration
            self.queue[index] = replace(item, start=new_start, end=new_start + duration)
            self.starts[item.event_id] = new_start
            end = new_start + duration

    def holds(self, event_id: str) -> bool:
        """Whether the utterance is still on the timeline, i.e. no interruption cut it."""
        return any(item.event_id == event_id for item in self.queue)

    def end_before(self, event_id: str) -> float:
        """When the utterance queued just before this one stops playing."""
        ends = []
        for item in self.queue:
            if item.event_id == event_id:
                break
            ends.append(item.end)
        return max(ends, default=0.0)

    def cut(self, now: float) -> list[Cut]:
        """Stop everything still audible or queued at `now`, reporting how much was heard."""
        cuts = []
        for item in self.queue:
            if item.end <= now:
                continue
            heard = 0.0 if item.start >= now else (now - item.start) / max(item.duration, 1e-9)
            cuts.append(Cut(item, min(heard, 1.0)))
        self.queue = [item for item in self.queue if item.end <= now]
        return cuts
