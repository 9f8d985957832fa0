"""Whether a short caller utterance is only an acknowledgement ("mm-hmm", "okay", "got it").

Pure: text in, verdict out. It reads transcripts as Whisper writes them ("MMM.", "Mm-hmm.",
"Uh-huh.", "Oh."); anything with content (a no, a correction, a question, a day) is not one.
"""

from __future__ import annotations

import re

# Voiced length bound: piper's "Mm-hmm." is 600 ms voiced under webrtcvad (500 under Silero),
# "Okay." 460 (360) and "Got it." 400 (320), while "Wait, no. Friday morning instead." is 2120
# (1800); longer speech over the agent is an interruption before its transcript is known.
MAX_VOICED_MS = 700
MAX_WORDS = 4

# One token each; hums of any length ("mm", "mmm", "mhm", "hmm-mm") fold to these forms.
_WORDS = frozenset(
    {
        "mm",
        "mhm",
        "mmhm",
        "uhhuh",
        "oh",
        "ah",
        "okay",
        "ok",
        "yeah",
        "yep",
        "yup",
        "right",
        "alright",
        "sure",
        "gotcha",
        "cool",
        "great",
        "thanks",
    }
)
# Two-word acknowledgements, matched before single words.
_PAIRS = frozenset({("got", "it"), ("all", "right"), ("i", "see"), ("thank", "you"), ("uh", "huh")})
_HUM = re.compile(r"^(?:m+|hm+|mh+m+|m+h+m+|m+hm+)$")
_UH_HUH = re.compile(r"^(?:uh+huh+|uh+hu+h*|ah+ha+)$")


def _tokens(text: str) -> list[str]:
    """Lowercase words with hyphens joined ("mm-hmm" → "mmhmm"); other punctuation is a break."""
    joined = re.sub(r"(?<=[a-z])-(?=[a-z])", "", text.lower())
    return re.findall(r"[a-z0-9']+", joined)


def _normal(token: str) -> str:
    if _HUM.match(token):
        return "mm"
    if _UH_HUH.match(token):
        return "uhhuh"
    return token


def is_backchannel(text: str) -> bool:
    """True when every word is an acknowledgement and there are at most MAX_WORDS of them."""
    words = [_normal(token) for token in _tokens(text)]
    if not words or len(words) > MAX_WORDS:
        return False
    index = 0
    while index < len(words):
        if tuple(words[index : index + 2]) in _PAIRS:
            index += 2
        elif words[index] in _WORDS:
            index += 1
        else:
            return False
    return True


def words_beyond(text: str, spoken: str) -> str:
    """The words of `text` that are not among `spoken`'s: a transcript less the agent's echo."""
    echoed = set(_tokens(spoken))
    return " ".join(token for token in _tokens(text) if token not in echoed)
