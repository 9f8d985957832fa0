"""Whether a caller's reply confirms the proposal just read back: confirm, not, or unclear.

Pure. Errs towards asking: a missed yes costs a question, a false yes costs a booking.
Every decision names the cue it rests on, so a verdict can point at it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from lab.events.types import Action, Confirmation, CueKind, UnderstandingKind
from lab.language.phrases import Phrases

_EXPLICIT = re.compile(
    r"\b(?:yes|yeah|yep|yup|yea|yah|aye|affirmative|absolutely|definitely|certainly|of course"
    r"|by all means|correct|exactly|that's (?:right|correct)|that is (?:right|correct)"
    r"|please do|(?:just )?do it|do that|let's do (?:it|that|this)|go for it|make it so"
    r"|(?:i )?confirm(?:ed)?(?: (?:the|that|this|my|it) ?(?:refund|booking|appointment"
    r"|reservation|slot|one|order|time)?)?"
    r"|(?:go ahead|proceed)(?: (?:with|and) (?:the|that|it|this)?(?: ?(?:refund|booking"
    r"|appointment|book (?:it|that|this)|refund (?:it|that|this)|do (?:it|that)))?)?"
    r"|book (?:it|that|this|me in|(?:the|that|this) (?:appointment|booking|slot|one|time))"
    r"|lock (?:it|that|this) in|(?:put|pencil|sign|pop|stick|jot|count) me (?:down|in|up)"
    r"(?: for (?:it|that|this)(?: one)?)?|get (?:me|it|that) booked(?: in)?"
    r"|(?:reserve|schedule|grab) (?:it|that|this)(?: one| for me)?"
    r"|(?:i'll|i will|we'll) (?:take|have) (?:it|that|this)(?: one)?"
    r"|(?:let's|lets|i'll|we'll) go (?:with|for) (?:it|that|this)(?: one)?"
    r"|go on then|(?:that's|that is) the one|put (?:it|that|the refund) through"
    r"|make it happen"
    r"|refund (?:it|that|this|me)|(?:issue|process|send) (?:it|that|the refund)"
    r"|(?:i'd|i would) like that)\b"
)
_NAMES_BOOKING = re.compile(r"\b(?:book|booking|appointment|reservation|slot)\b")
_NAMES_REFUND = re.compile(r"\b(?:refund|refunds|refunded)\b")
# A yes that answers "are you there?" or "can you hear me?", not the readback.
_PRESENCE = re.compile(
    r"\b(?:(?:i'm|i am|im) (?:still )?(?:here|there|on the line|listening|with you|back)"
    r"|still (?:here|there|on the line|with you)|(?:i )?can hear you|hear you (?:fine|ok|okay"
    r"|now|well|clearly)|loud and clear"
    r"|go on(?! then)(?!,? (?:and )?(?:book|lock|confirm|do it|refund))"
    r"|carry (?:it )?on|keep going|continue"
    r"|you were saying|(?:you're|you are) breaking up|bad line|was distracted|i'm back)\b"
)
_PRESENCE_ASKED = re.compile(
    r"\b(?:can you (?:still )?hear me|are you (?:still )?there|is (?:anyone|anybody) there"
    r"|did you (?:get|hear) (?:that|me))\b"
)
_CLARIFY = re.compile(
    r"\b(?:repeat|say (?:that|it) again|say again|pardon|come again|what did you say|what was that"
    r"|(?:didn't|did not|couldn't|could not) (?:catch|hear|get)|once more|one more time"
    r"|what (?:time|day) (?:was|is) (?:that|it)|which (?:day|time)(?: was (?:that|it))?"
    r"|what time did you say|what day did you say|excuse me|(?<!uh )huh)\b"
)
_QUESTION_BACK = re.compile(
    r"^(?:(?:wait|sorry|so|um|uh|er|hang on|hold on|and|just to check) )*"
    r"(?:(?:is|was) (?:that|it) (?:\w+ ){0,3}(?:or|am|pm|a m|p m)\b"
    r"|did you (?:just )?say|do you mean|you mean|you said)"
)
_DECLINE = re.compile(
    r"\b(?:no|nope|nah|negative|not (?:yet|now|today|right|correct|quite|really|that one|that)"
    r"|\w+n't|dont|cant|do not|cannot|never ?mind|forget (?:it|that|about it)|cancel|stop"
    r"|hold off|wrong|incorrect|no way|rather not)\b"
)
_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|probably|possibly|might|i guess|i suppose|i think|i believe|hmm+|hm"
    r"|so far|let me (?:think|check|see)|think about it|kind of|sort of|wait|hold on|hang on"
    r"|one sec(?:ond)?|give me a (?:sec|second|minute|moment)|for now|i hope|we'll see"
    r"|hard to say|torn|i need to check|ask my \w+|should be"
    r"|(?:uh|um|er|erm|uhm) (?=yes|yeah|yep|ok|okay|sure)"
    # The recognizer writes a hesitant "Hmm, yes" as "And yes": a yes that starts unclean.
    r"|^and (?=yes|yeah|yep))\b"
)
# Consent said through a negative ("no, that's not wrong", "no objections", "I don't see why
# not"): no refusal, but no yes either; only an explicit cue beside it confirms.
_CONSENT = re.compile(
    r"\b(?:(?:no,? )?(?:(?:that's|that is|it's|it is|that was|nothing's|nothing is) )?not wrong"
    r"(?: at all)?"
    r"|nothing(?:'s| is)? wrong with (?:that|it|this)|no objections?(?: (?:here|from me))?"
    r"|(?:i )?(?:don't|do not|dont|can't|cannot) see why not|no reason not to"
    r"|(?:i )?(?:can't|cannot) argue with (?:that|it|this)|no complaints?(?: (?:here|from me))?"
    r"|(?:i )?have no (?:objection|problem) with (?:that|it|this)|not opposed)\b"
)
_UNCERTAIN = re.compile(
    r"\b(?:not (?:so )?(?:sure|certain)|unsure|(?:don't|dont|do not) know|no idea)\b"
)
_PLEASANT = re.compile(
    r"\b(?:no (?:problem|worries|doubt)|not a problem|(?:don't|do not|wouldn't|would not) mind"
    r"|why not|can't wait|cannot wait|couldn't be better)\b"
)
_POSITIVE = re.compile(
    r"\b(?:ok|okay|okey|alright|all right|sure|fine|good(?! (?:morning|afternoon|evening|night))"
    r"|great|grand|nice|perfect|cool|lovely|excellent|awesome|wonderful|brilliant|right|works?"
    r"|could work|sounds (?:good|great|fine|right|perfect|ok|okay|like a plan)|uh huh|mm hmm"
    r"|mhm|mm+|m(?: m)+|thanks|thank you|i think so|fair enough|got it|understood|sweet|super"
    r"|i guess|i suppose|maybe|perhaps|probably|possibly|let me think|i believe so)\b"
)
# Words that may stand beside a yes without saying anything else.
_BESIDE_A_YES = frozenset(
    [
        "yes",
        "yeah",
        "yep",
        "yup",
        "yea",
        "yah",
        "aye",
        "sure",
        "ok",
        "okay",
        "okey",
        "alright",
        "right",
        "correct",
        "exactly",
        "absolutely",
        "definitely",
        "certainly",
        "perfect",
        "great",
        "good",
        "fine",
        "lovely",
        "excellent",
        "wonderful",
        "brilliant",
        "awesome",
        "cool",
        "nice",
        "super",
        "fantastic",
        "grand",
        "ta",
        "fab",
        "fabulous",
        "nicely",
        "suits",
        "suit",
        "mate",
        "love",
        "pal",
        "buddy",
        "smashing",
        "cracking",
        "marvellous",
        "splendid",
        "ideal",
        "spot",
        "on",
        "thanks",
        "thank",
        "you",
        "please",
        "cheers",
        "that",
        "that's",
        "thats",
        "this",
        "it",
        "it's",
        "its",
        "is",
        "sounds",
        "sound",
        "works",
        "work",
        "would",
        "be",
        "will",
        "do",
        "does",
        "go",
        "ahead",
        "and",
        "then",
        "so",
        "well",
        "oh",
        "ah",
        "thing",
        "just",
        "the",
        "a",
        "one",
        "booking",
        "appointment",
        "slot",
        "time",
        "refund",
        "reservation",
        "order",
        "for",
        "me",
        "us",
        "with",
        "that'll",
        "that'd",
        "i",
        "i'd",
        "i'll",
        "we",
        "we'll",
        "let's",
        "lets",
        "book",
        "confirm",
        "confirmed",
        "proceed",
        "plan",
        "lock",
        "in",
        "of",
        "course",
        "by",
        "all",
        "means",
        "very",
        "much",
        "sounds",
        "put",
        "down",
        "pencil",
        "sign",
        "up",
        "take",
        "like",
        "please",
        "all",
        "mm",
        "hmm",
        "mhm",
        "issue",
        "process",
        "send",
        "really",
        "yes",
    ]
)


@dataclass(frozen=True)
class Reply:
    """What a reply does to the pending proposal, and the cue that decided it."""

    kind: UnderstandingKind
    confirmation: Confirmation
    cue_kind: CueKind
    cue: str | None


def classify_question_back(phrases: Phrases) -> Reply | None:
    """ "Wait, is that the morning or the afternoon?": a question about the readback, whatever
    values it names, is asked again rather than read as a new request."""
    if cue := phrases.first(_QUESTION_BACK):
        return Reply(UnderstandingKind.UNCLEAR, Confirmation.UNCLEAR, "clarify", cue)
    return None


def explicit_cues(phrases: Phrases) -> set[int]:
    """The tokens that an explicit confirmation cue covers ("yes", "lock it in", "book it")."""
    return phrases.find(_EXPLICIT)


def classify_reply(phrases: Phrases, *, proposal_action: Action | None) -> Reply | None:
    """The reply reading of an utterance that names no values; None if it is no reply at all."""
    explicit = phrases.find(_EXPLICIT)
    if cue := phrases.first(_PRESENCE_ASKED):
        return Reply(UnderstandingKind.UNCLEAR, Confirmation.NOT_CONFIRM, "presence", cue)
    if cue := phrases.first(_PRESENCE):
        return Reply(UnderstandingKind.POSITIVE, Confirmation.NOT_CONFIRM, "presence", cue)
    if cue := phrases.first(_CLARIFY):
        return Reply(UnderstandingKind.UNCLEAR, Confirmation.UNCLEAR, "clarify", cue)
    uncertain, pleasant = phrases.find(_UNCERTAIN), phrases.find(_PLEASANT)
    consent = phrases.find(_CONSENT)
    pleasant |= consent
    declined = phrases.find(_DECLINE) - uncertain - pleasant
    if declined:
        # Any refusal outweighs any yes in the same breath: mixed signals never confirm.
        cue = _words(phrases, declined)
        return Reply(UnderstandingKind.DECLINE, Confirmation.NOT_CONFIRM, "decline", cue)
    hedged = uncertain | phrases.find(_HEDGE)
    positive = explicit or pleasant or phrases.find(_POSITIVE) - uncertain
    if hedged:
        kind = UnderstandingKind.POSITIVE if positive else UnderstandingKind.UNCLEAR
        return Reply(kind, Confirmation.UNCLEAR, "hedge", _words(phrases, hedged))
    if explicit:
        return _explicit(phrases, explicit, proposal_action)
    if positive:
        cue = _words(phrases, positive)
        return Reply(UnderstandingKind.POSITIVE, Confirmation.UNCLEAR, "positive", cue)
    return None


def _explicit(phrases: Phrases, explicit: set[int], proposal_action: Action | None) -> Reply:
    tokens = phrases.spoken.tokens
    beside = {i for i, token in enumerate(tokens) if token.text in _BESIDE_A_YES}
    extra = set(range(len(tokens))) - explicit - beside - phrases.find(_PLEASANT)
    extra -= phrases.find(_CONSENT)
    if extra:
        # A yes with unrelated words: it may answer something else, so ask again.
        return Reply(
            UnderstandingKind.POSITIVE, Confirmation.UNCLEAR, "unrelated", _words(phrases, extra)
        )
    named = _named_action(phrases)
    cue = _words(phrases, explicit)
    if proposal_action is not None and named is not None and named is not proposal_action:
        return Reply(UnderstandingKind.POSITIVE, Confirmation.UNCLEAR, "other_action", cue)
    return Reply(UnderstandingKind.CONFIRM, Confirmation.CONFIRM, "explicit", cue)


def _named_action(phrases: Phrases) -> Action | None:
    if phrases.find(_NAMES_REFUND):
        return Action.REFUND
    return Action.BOOK if phrases.find(_NAMES_BOOKING) else None


def _words(phrases: Phrases, indices: set[int]) -> str:
    """The caller's words at indices, as written, runs joined by "…"."""
    runs: list[list[int]] = []
    for index in sorted(indices):
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    return " … ".join(phrases.spoken.fragment(run[0], run[-1] + 1) for run in runs)
