"""How much of Whisper's 30 s window a segment needs, and whether its words can be trusted.

Pure. faster-whisper pads every segment to 3000 mel frames before the encoder; CTranslate2's
encoder takes fewer, at a cost roughly linear in frames. Windows much shorter than about twice
the utterance make the decoder repeat itself, and any window moves the logits a little, which
flips a word that was a near tie ("Tuesday" / "to stay"); so a short window comes with guards.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

FULL_WINDOW_FRAMES = 3000
FRAMES_PER_S = 100
# Speech runs at about 2.5-3 words a second; five tokens a second of audio, plus room for a
# short phrase, is more than any caller line needs and less than a loop produces.
_TOKENS_PER_S = 5
_TOKENS_FLOOR = 16
_WORDS_PER_S_LOOPED = 6.0
# The least lead, in logits, of each decoded step over what would change the words: the least
# that kept a 15 s window's words the full window's on every caller line and the spoken corpus
# (a word that changed led by 0.9 at most); a window moved a lead by up to about 2, so this is
# tuned, not a bound (docs/benchmarks.md).
NEAR_TIE_LOGITS = 1.0


def window_frames(*, audio_ms: int, window_ms: int) -> int:
    """The encoder frames for a segment: the short window when it fits twice, else the full one."""
    frames = window_ms // 10
    if frames <= 0 or frames >= FULL_WINDOW_FRAMES or 2 * audio_ms // 10 > frames:
        return FULL_WINDOW_FRAMES
    return frames


def token_budget(audio_ms: int) -> int:
    """The most new tokens a segment of this length can honestly need."""
    return _TOKENS_FLOOR + _TOKENS_PER_S * audio_ms // 1000


def looks_looped(text: str, *, audio_ms: int) -> bool:
    """Whether the words repeat a word or phrase back to back, or are more than the audio holds."""
    words = re.findall(r"[a-z0-9']+", text.lower())
    if len(words) > _WORDS_PER_S_LOOPED * max(audio_ms, 1000) / 1000:
        return True
    # Any word or phrase twice running: a short window turned "Yes." into "Yes. Yes." (issue 28).
    # A caller's own "no, no" is suspect too; it only costs the full window's second hearing.
    return any(
        words[start : start + size] == words[start + size : start + 2 * size]
        for size in range(1, len(words) // 2 + 1)
        for start in range(len(words) - 2 * size + 1)
    )


def near_tie(margins: Sequence[float]) -> bool:
    """Whether any step of a decode led what would change its words by less than NEAR_TIE_LOGITS."""
    return any(margin < NEAR_TIE_LOGITS for margin in margins)
