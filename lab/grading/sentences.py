"""The kinds of clause that need no grounding: greetings, filler, questions back, hand-offs,
refusals, "I don't know", running the call, tool-status lines and readbacks of tool results.

Pure. The grader fails closed: a clause that makes no checkable claim is supported only when it
is one of these kinds; any other declarative is flagged for a human.
"""

from __future__ import annotations

import re

from lab.grading import phrases as ph

_ = r"[\s-]+"
GREETING = re.compile(
    rf"^(?:hello|hi|hey|good{_}(?:morning|afternoon|evening)|thanks?|thank{_}you|"
    rf"you're{_}welcome|bye|goodbye|see{_}you(?:{_}(?:then|soon|on|next))?|have{_}a{_}(?:good|great|nice|lovely)|take{_}care|"
    rf"welcome{_}to|you've{_}reached|this{_}is{_}\w+|my{_}name{_}is|cheers|talk{_}soon|"
    rf"good{_}luck|best{_}of{_}luck|all{_}the{_}best)\b"
)
FILLER = re.compile(
    rf"^(?:(?:ok(?:ay)?|sure|alright|all{_}right|right|great|perfect|lovely|excellent|"
    rf"wonderful|no{_}problem|of{_}course|certainly|absolutely|sounds{_}good|understood|"
    rf"got{_}it|gotcha|i{_}see|i{_}understand|no{_}worries|my{_}pleasure|fair{_}enough|"
    rf"mhm|hmm|um|uh|oh|yes|yeah|yep|no|nope|thanks|done|great{_}news|good{_}news|at{_}all|"
    rf"sure{_}thing)[\s,.!]*)+$"
    rf"|^(?:(?:ok(?:ay)?|sure(?:{_}thing)?|alright|right|so|well|great|got{_}it|hmm|um|uh|oh|"
    rf"i{_}understand|i{_}see|no{_}problem|yes|yeah)[\s,]+)*"
    rf"(?:one{_}(?:moment|second|sec)|just{_}a{_}(?:moment|second|sec)|hold{_}on|bear{_}with{_}me|"
    rf"let{_}me{_}(?:check|see|look|find|pull|think|try|confirm|get|make{_}a{_}note|note)|"
    rf"give{_}me{_}(?:a|one){_}(?:second|moment|sec)|i'm{_}(?:checking|looking)|"
    rf"i'll{_}(?:check|look|take{_}a{_}look)|i{_}hope{_}(?:that|this){_}helps|happy{_}to{_}help|glad{_}to{_}help|"
    rf"(?:i'm|i{_}am){_}(?:so{_})?sorry|sorry|i{_}apologi[sz]e|that's{_}(?:fine|ok(?:ay)?|"
    rf"all{_}right|great|no{_}problem|understandable)|i{_}can{_}help{_}(?:you{_})?with{_}that|"
    rf"i'd{_}be{_}happy{_}to|that{_}sounds{_}(?:frustrating|stressful|annoying|difficult|great)|"
    rf"i{_}hear{_}you|(?:good|great){_}question|that's{_}a{_}(?:good|great|fair){_}question|"
    rf"(?:that|it|this|[a-z]+{_}pain|[a-z]+){_}(?:can{_}be|sounds|must{_}be){_}(?:really{_}|so{_})?"
    rf"(?:tough|hard|painful|frustrating|difficult|stressful)|thanks{_}for{_}(?:calling|waiting|holding|your{_}patience))\b"
)
# What the tools did this call, said back ("The system didn't answer in time", "Your reference
# is R-1234"): the events hold them, and the gate guards every action they report.
TOOL_STATUS = re.compile(
    rf"\b(?:the{_}system|the{_}lookup|the{_}booking{_}system|our{_}system){_}(?:didn't|did{_}not|"
    rf"isn't|is{_}not|couldn't|failed|timed{_}out|is{_}down|is{_}slow)|^(?:let{_}me{_})?try"
    rf"(?:ing)?{_}(?:again|once{_}more)|something{_}went{_}wrong|^(?:your|the){_}(?:booking{_}|appointment{_}|refund{_})?(?:reference|"
    rf"confirmation|booking|receipt)(?:{_}(?:number|code))?{_}is\b|you're{_}all{_}set\b|^(?:that's|that{_}is|it's)"
    rf"{_}(?:already{_})?(?:done|booked|confirmed)\b"
)
# What the lab's gate makes an agent say about the caller's request: no fact about the business.
GATE_TALK = re.compile(
    rf"\b(?:won't|will{_}not|not){_}(?:go{_}ahead|act{_}on|proceed|book{_}anything)|"
    rf"need{_}a{_}clear{_}yes|nothing{_}(?:is{_})?waiting{_}for{_}your{_}confirmation|"
    rf"(?:that|your){_}request{_}has{_}changed|before{_}i{_}go{_}ahead"
)
# "Got it, a refund on order 4512", "Yes, that's Thursday afternoon": the caller's words back.
ECHO = re.compile(
    rf"^(?:got{_}it|ok(?:ay)?|right|alright|sure|so|yes|yeah),?{_}(?:a|an|that's|that{_}is){_}"
    rf"(?!.*\b(?:we|our|free|guarantee\w*|always|never|included)\b)"
    rf"|^(?:order|reference|booking){_}[\w-]+,?{_}(?:got{_}it|noted)[.!]?$"
    rf"|^(?:got{_}it|ok(?:ay)?|thanks|right),?{_}(?:[a-z]+{_}){{0,2}}[\w-]*\d[\w-]*[.!]?$"
    rf"|^(?:got{_}it|ok(?:ay)?|right|sure),?{_}(?:(?:this|next){_})?(?:monday|tuesday|wednesday|"
    rf"thursday|friday|saturday|sunday|tomorrow|today)(?:{_}(?:morning|afternoon|evening))?[.!]?$"
)
# "..., but the shop can": the second half of a hand-off.
HANDOFF_TAIL = re.compile(
    rf"\b(?:ask|speak{_}(?:to|with)|talk{_}(?:to|with)|check{_}with|discuss\w*{_}(?:that|this|it)"
    rf"{_}with){_}(?:the|our|your|a|an|one{_}of{_}our){_}|"
    rf"^(?:(?:the|our|a|an){_}[a-z ]{{2,30}}|someone{_}(?:there|else)){_}(?:can|will|could|would)"
    rf"(?:{_}help(?:{_}you)?)?[.!]?$|(?:listed|posted){_}on{_}(?:our|the){_}website|"
    rf"(?:check|see|visit){_}(?:our|the){_}website"
)
# A clause about the caller or the call, not the business ("you asked about Tuesday"), and
# ending the call ("it sounds like we're done, so I'll end the call here").
ABOUT_CALLER = re.compile(
    rf"^(?:you{_}(?:asked|said|mentioned|wanted|want|need|called)|just{_}to{_}(?:confirm|be{_}sure|"
    rf"check)|to{_}confirm|so{_}that's|(?:is|was){_}there{_}anything{_}else|anything{_}else)\b"
    rf"|^(?:it{_})?(?:sounds|looks|seems){_}like{_}(?:we're|we{_}are){_}(?:done|all{_}set)[.!]?$"
    rf"|\b(?:i'll|i{_}will|let{_}me|i'm{_}going{_}to){_}(?:end|close|wrap{_}up){_}(?:the|this|our)"
    rf"{_}call(?:{_}(?:here|now|there))?[.!]?$"
)

# Running the call itself, each a whole clause so no fact can ride along: ending it, saying the
# agent is there, repeating what was cut, saying what it is, and how a tool call went.
CALL_FLOW = re.compile(
    rf"(?:it{_}(?:sounds|seems){_}like{_}we're{_}(?:all{_})?(?:done|finished),?{_}so{_})?"
    rf"i'll{_}(?:end|close){_}(?:the|this|our){_}call(?:{_}(?:here|now))?"
    rf"|(?:i'm|i{_}am){_}(?:still{_})?(?:here|listening|on{_}the{_}line)"
    rf"|here{_}it{_}is{_}again|let{_}me{_}(?:repeat|say){_}(?:that|it){_}again"
    rf"|(?:sorry,?{_})?you{_}cut{_}in{_}before{_}i{_}finished"
    rf"|(?:i'm|i{_}am){_}(?:an?|the|your)(?:{_}[a-z']+)?{_}(?:automated|virtual|ai|digital|voice)"
    rf"{_}(?:agent|assistant)"
    rf"|(?:that's|that{_}is|this{_}is|it's){_}taking{_}(?:a{_}bit{_})?longer{_}than{_}(?:usual|expected)"
    rf"|i've{_}checked"
    rf"|(?:i've{_}checked:?{_})?(?:it|that){_}(?:did{_}not|didn't){_}go{_}through"
    rf"(?:,?{_}so{_}nothing{_}(?:was|has{_}been){_}done)?"
)
_END = re.compile(r"[\s.,;:!]+$")


_LEAD = re.compile(
    rf"^(?:(?:ok(?:ay)?|sure|great|right|alright|well|so|hmm|um|oh|perfect|lovely|yes|yeah|"
    rf"no{_}problem|got{_}it)[\s,!.]+)+"
)


def is_safe(lower: str) -> bool:
    """Whether a clause with no checkable claim needs no grounding."""
    text = lower.strip().strip("\"'").strip()
    bare = _LEAD.sub("", text) or text
    if not re.search(r"[a-z0-9]", text):
        return True
    if text.endswith("?") or ph.QUESTION_START.search(text):
        return True
    if CALL_FLOW.fullmatch(_END.sub("", text)) or CALL_FLOW.fullmatch(_END.sub("", bare)):
        return True
    return any(
        pattern.search(text) or pattern.search(bare)
        for pattern in (
            ph.DECLINE,
            ph.UNKNOWN,
            ph.HANDOFF,
            GREETING,
            FILLER,
            TOOL_STATUS,
            ABOUT_CALLER,
            GATE_TALK,
            ECHO,
            HANDOFF_TAIL,
        )
    )
