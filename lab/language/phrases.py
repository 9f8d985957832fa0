"""An utterance's tokens as one lowercase line, so that phrase patterns match across them.

Pure: the understanding modules share it to say which tokens a pattern covers.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from lab.language.numbers import Spoken


@dataclass(frozen=True)
class Match:
    """One match of a phrase pattern: tokens[first:end], and the words it matched."""

    first: int
    end: int
    text: str


@dataclass(frozen=True)
class Phrases:
    spoken: Spoken
    line: str
    starts: tuple[int, ...]

    @classmethod
    def of(cls, spoken: Spoken) -> Phrases:
        starts, at = [], 0
        for token in spoken.tokens:
            starts.append(at)
            at += len(token.text) + 1
        return cls(spoken, " ".join(token.text for token in spoken.tokens), tuple(starts))

    def matches(self, pattern: re.Pattern[str]) -> list[Match]:
        """Every match of pattern, as the tokens it covers."""
        found: list[Match] = []
        if not self.starts:
            return found
        for match in pattern.finditer(self.line):
            first = bisect_right(self.starts, match.start()) - 1
            end = max(first + 1, bisect_left(self.starts, match.end()))
            found.append(Match(first, end, match.group()))
        return found

    def find(self, pattern: re.Pattern[str]) -> set[int]:
        """Indices of the tokens that pattern's matches cover."""
        return {index for match in self.matches(pattern) for index in range(match.first, match.end)}

    def first(self, pattern: re.Pattern[str]) -> str | None:
        """The words of pattern's first match, as the caller wrote them."""
        found = self.matches(pattern)
        return self.spoken.fragment(found[0].first, found[0].end) if found else None
