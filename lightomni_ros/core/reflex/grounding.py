# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The response check: a spoken reply must come from the retrieved memories, not from the prompt or thin air.

Small backbones (the 135M default on a CPU) often copy their prompt, talk about "the user", repeat a sentence, or say
something the memories do not hold. :func:`reply_problem` names such a reply; the engine then speaks a quote of a
memory that answers the question instead (:mod:`.answering`), with face ids replaced by the names the profiles know
(:func:`speakable`). The Action says which one was spoken (backend note ``extractive: <problem>``).
"""

from __future__ import annotations

import re
from typing import Callable, Sequence

from ..text import introduced_name, introduced_other, names_a_place, unaddressed
from .prompts import face_names
from .types import UNSEEN_SPEAKER, MemoryItem

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_STOP = frozenset('''the and for are was were you your yours what who whom when where why how did does do can could
would should will shall this that these those with from have has had not but all any his her him she they them their
there here about into onto out over than then too very just also its it's i'm i've you're tell say said me my mine our
ours was is am be been being of to in on at by an a or if so as'''.split())
#: Phrases of the prompt or of talk about the conversation instead of an answer.
_PROMPT_ECHO = ('memories:', 'memories (oldest first)', 'question:', 'relevant memories', '<|im_', '<start_of_turn>',
                'the user', "user's", 'the assistant', 'what happened so far', 'recent events:', '[segment ',
                'visible people:', 'scene:', 'typed instruction:', '(nobody spoke)')
_FACE = re.compile(r'<face_\d+>')
#: the header of a segment as the prompts render it ("[15:30, 5 s]"): a reply that is one copied the prompt
_SEGMENT_HEADER = re.compile(r'\[\d{1,2}:\d{2}, \d+ s\]')
#: a voice id memory could not resolve to a face or a name (the unseen-speaker phrase after it says the rest)
_VOICE = re.compile(r'<voice_\d+>(, )?')
#: a memory of words said by a bare voice id: '<voice_1> said: ...' (a voice no face was seen speaking with)
_VOICE_SAID = re.compile(r'<voice_\d+> said:')
#: a voice id, as the unseen-speaker phrase and a bare '<voice_1> said: ...' both open
_VOICE_ID = re.compile(r'<voice_\d+>')
_SPAN = re.compile(r'^\s*\[[^\]]*\](?:\s*--\s*\[[^\]]*\])?\s*:\s*')
#: The robot's own earlier answer inside an episodic entry (always its last part): never evidence, never quoted.
_ANSWERED = re.compile(r';?\s*answered ".*$', re.S)


#: a question about what was said: "what did Ana say", "what was Joe saying about ...", "what did he tell you",
#: "the last thing the radio said", "the last thing the voice on the radio said", "the words Ana used"
_QUOTE = re.compile(r"\bwhat\b(?:\s+\S+){1,6}?\s+(?:say|said|saying|tell|told|telling|mention|mentioned|ask|asked)\b"
                    r"|\b(?:thing|things|words?)\b(?:\s+\S+){0,6}?\s+(?:say|said|told|mentioned|use|used)\b", re.I)


def is_quote_question(question: str) -> bool:
    """Whether ``question`` asks what someone said (answered by a quote, see ``response.quote_questions``)."""
    return bool(_QUOTE.search(question or ''))


#: words that point at a voice from a device: a quote question with one is about what an unseen speaker said ("the
#: woman on the news" is a broadcast voice before she is a person described)
_DEVICE = re.compile(r'\b(?:radio|tv|television|phone|telephone|loudspeaker|speakers?|podcast|intercom|broadcast|news|'
                     r'presenter|announcer|newsreader|reporter|commentator|dj)\b', re.I)


def names_a_device(text: str) -> bool:
    """Whether ``text`` speaks of a device that talks ("the radio", "on TV"): its words are an unseen speaker's."""
    return bool(_DEVICE.search(text or ''))


#: a person described instead of named: "the man in the video", "the woman at the door"
_DESCRIBED = re.compile(r'\b(?:the|that|this) (?:man|woman|person|guy|lady|boy|girl|kid|child|visitor|stranger)\b',
                        re.I)


def evidence(text: str) -> str:
    """A memory without the robot's own earlier answer and without the unseen speaker's source hint.

    A wrong earlier answer must not ground the next one, and "(radio, TV, phone ...)" is no evidence of a radio.
    """
    return _ANSWERED.sub('', text).replace(UNSEEN_SPEAKER, UNSEEN_SPEAKER.split(' (')[0]).strip()


def said_in(memory: MemoryItem) -> str:
    """What a memory holds as evidence: no time-span prefix, no earlier answer, no source hint."""
    return evidence(_SPAN.sub('', memory.text))


_HEARD = re.compile(r'heard "([^"]*)"')
#: a transcript stored as a fact: "<face_1> said: ...", "someone typed: ..." (who with the verb, then the words)
SAID_AS_FACT = re.compile(r'^([^:"]{1,80}? (?:said|typed): )(.*)$', re.S)


def holds_only_a_question(text: str) -> bool:
    """Whether everything a memory heard was a question (``heard "...?"``; the robot's ``answered`` is not read).

    Such an episode holds what someone asked, not an answer: quoted, it repeats the question back (the closest
    memory to "where is my laptop?" is often the last time someone asked it).
    """
    heard = words_heard(text)
    return bool(heard) and all(h.strip().endswith('?') for h in heard)


def words_heard(text: str) -> list[str]:
    """The words a memory holds as said ([] for none).

    An episode's ``heard "..."`` parts, else the words of a transcript stored as a fact ("<face_1> said: ...",
    "someone typed: ...").
    """
    heard = _HEARD.findall(text)
    if not heard:
        said = SAID_AS_FACT.match(_SPAN.sub('', text.strip()))
        heard = [said.group(2)] if said else []
    return heard


def said_by(question: str, memories: Sequence[MemoryItem], strict: bool = False,
            robot: Sequence[str] = ()) -> list[MemoryItem]:
    """The memories a quote question can be about (profiles are kept: they name the faces).

    Those of the person it names ("what did Joe say"), of an unseen speaker when it names a device ("the man on the
    radio"; else of a voice no face was seen speaking with, unless it called the robot by one of its names,
    ``robot``: a device does not), of people without a known name when it describes someone ("the man in the
    video"); all of them when it does none of these or nothing matches (``strict``: none of them then).
    """
    profiles = [m for m in memories if m.ref.startswith('profile:')]
    facts = [m for m in memories if not m.ref.startswith('profile:')]
    q = question.lower()
    names = face_names(profiles)
    faces = {f for f, name in names.items() if re.search(rf'\b{re.escape(name.lower())}\b', q)}
    if faces:
        keep = [m for m in facts if any(f in m.text for f in faces)]
    elif names_a_device(q):
        # an unseen speaker's words, and what the same voices said while people were in view (a TV heard then is
        # stored under its voice id, "<voice_1> said: ...", never under a face); else a voice that no face was seen
        # speaking with
        unseen = [m for m in facts if UNSEEN_SPEAKER in m.text]
        voices = {v for m in unseen for v in _VOICE_ID.findall(m.text)}
        keep = unseen + [m for m in facts if m not in unseen and _VOICE_SAID.match(said_in(m))
                         and _VOICE_ID.match(said_in(m)).group(0) in voices] if unseen else \
            [m for m in facts if _VOICE_SAID.match(said_in(m)) and not calls(said_in(m), robot)]
    elif _DESCRIBED.search(q):
        # someone described, not named, while others have names: most likely a person the robot was not introduced to
        keep = [m for m in facts if any(f not in names for f in _FACE.findall(evidence(m.text)))]
    else:
        keep = []
    return profiles + (keep or ([] if strict else facts))


def calls(said: str, robot: Sequence[str]) -> bool:
    """Whether the words of a memory ('<voice_1> said: Okay robot, ...') open by calling the robot by a name."""
    words = said.partition(' said: ')[2] or said
    return bool(robot) and unaddressed(words, robot) != words


def content_words(text: str) -> set[str]:
    """Lower-case words that carry content (no stop words, three letters or more, or digits; "Rahul's" is "rahul")."""
    words = (w.removesuffix("'s") for w in _WORD.findall(text.lower()))
    return {w for w in words if w not in _STOP and (len(w) >= 3 or w.isdigit())}


#: "I don't know." / "I don't remember that.": the answer when the memories do not hold one
_REFUSAL = re.compile(r"^(?:sorry,?\s*)?i (?:do not|don't|did not|didn't) (?:know|remember|hear|see)\b", re.I)
#: words of a confirmation ("Okay, I will remember that.", "Nice to meet you, Ana."): a reply made of these and of
#: the request's own words claims nothing
_ACK_WORDS = frozenset('''okay sure alright right noted got thanks thank nice meet good know hello will remember
remind keep mind note later'''.split())

#: words that relate a person to what a fact tells (likes, has, works, lives ...): present in most memories of
#: people, they are no evidence that the rest of a reply is remembered
_RELATION = frozenset('''like likes liked love loves loved enjoy enjoys enjoyed prefer prefers want wants wanted has
have had own owns work works worked play plays played live lives lived come comes came always usually often'''.split())

#: the words of a confirmation that say the robot will keep what it was told
_KEEP_WORDS = frozenset('remember keep mind note noted'.split())

#: a clause that asks: it starts with a question word (after a preposition: "in which month", "at what time") or with
#: "do I", "is the", ... (speech recognition may drop the question mark; "can you ..." and "could you ..." are
#: requests more often than questions); "what a day" exclaims
_ASKS = re.compile(r"(?:^|[,;:.!?]\s*)(?:(?:in|at|on|for|from|since|until|to|with|by|of|about) (?=which|what|whom|"
                   r"whose|how|when|where))?(?:what(?!\s+an?\b)|where|when|who|whom|whose|which|why|how|(?:do|does|"
                   r"did|is|are|was|were|have|has)\s+\w+)\b", re.I)


#: words that open a sentence addressed to someone before what it says ("okay robot, ...", "excuse me, ...")
_LEAD = frozenset('okay ok hey hi hello excuse me robot assistant tell please sorry so well um uh and quick question'
                  .split())


#: a question asked as a request: "tell me where ...", "any idea when ...", "remind me what ...", "any news about ..."
#: (not a reminder request: "remind me when I get home to call Ana" says what to do)
_ASKED_AS_REQUEST = re.compile(r"\b(?:(?:tell me|any idea|do you know|you know|remind me) (?:what|where|when|who|"
                               r"whom|whose|which|why|how)\b(?!.*\bto [a-z]+)"
                               r"|any (?:news|word|updates?) (?:about|on)\b)", re.I | re.S)


def asks(text: str) -> bool:
    """Whether ``text`` asks a question.

    A question mark, a clause that opens like one (lead-in words aside), a request to tell what, where, when ... or
    what someone said ("tell me the last thing Ana said.").
    """
    words = _WORD.findall(text.lower())
    while words and words[0] in _LEAD:
        words.pop(0)
    return text.rstrip().endswith('?') or bool(_ASKS.search(text.strip())) or \
        bool(_ASKS.match(' '.join(words))) or bool(_ASKED_AS_REQUEST.search(text)) or is_quote_question(text)


def is_refusal(reply: str) -> bool:
    """Whether ``reply`` says the robot does not know or remember."""
    return bool(_REFUSAL.match(reply.strip()))


#: the first words of a refusal as a reply is decoded: "Sorry", "I don", "I do not", "I didn't"
_REFUSAL_OPENING = re.compile(r"^(?:sorry\b|i\s+(?:do|did)(?:n't|n|\s+not)?\b)", re.I)


def _quote_norm(text: str) -> str:
    return ' '.join(_WORD.findall(text.lower()))


#: where a quotable utterance starts in a memory: its beginning, after "said:", 'heard "', "typed:", or a sentence
_UTTERANCE_START = re.compile(r'(?:^|\bsaid:\s*|\bheard\s+"|\btyped:\s*|[.!?]\s+)(?=\S)', re.I)


def quoting_within(memories: Sequence[MemoryItem]) -> Callable[[str], bool]:
    """A test of a reply as it is decoded: whether its quotations are, so far, words said in ``memories``.

    A quotation still open ('... said: "Bimb') must be the start of an utterance of a memory (its beginning, after
    "said:" or 'heard "', a sentence), so a quote cannot open with the question's words and go on with a memory's
    (words lower-case without punctuation; the last one may be unfinished); a closed one must not stop inside a
    sentence (:func:`cut_quote`, as the grounding check judges it). A reply that quotes nothing passes.
    """
    starts = {_quote_norm(m.text[s.end():]) for m in memories for s in _UTTERANCE_START.finditer(m.text)}
    starts.discard('')

    def within(text: str) -> bool:
        n = text.count('"')
        if n % 2 == 0:
            return n == 0 or not cut_quote(text, memories)
        quoted = _quote_norm(text[text.rindex('"') + 1:])
        return not quoted or any(s.startswith(quoted) for s in starts)

    return within


def opens_refusal(text: str) -> bool:
    """Whether the reply decoded so far, ``text``, has begun to refuse ("I don", "Sorry"; not "I heard that")."""
    return bool(_REFUSAL_OPENING.match(text.strip()))


def promises_to_keep(reply: str) -> bool:
    """Whether ``reply`` confirms that the robot will keep what it was told.

    "Okay, I will remember that.", "Thanks, I will keep that in mind." (not "I don't remember that.").
    """
    words = content_words(reply)
    return bool(words & _KEEP_WORDS) and words <= _ACK_WORDS and not is_refusal(reply)


#: words that ask the robot to keep something: "remember that ...", "note that ...", "keep in mind ...", "remind me
#: ...", "write this down", "don't forget ..."
_KEEP_REQUEST = re.compile(r"\b(?:remember|remind|note|keep (?:it |this |that )?in mind|write (?:it |this |that )?down"
                           r"|save|store|don't forget|do not forget|for later|for the record)\b", re.I)


def asks_to_keep(utterance: str) -> bool:
    """Whether ``utterance`` asks the robot to keep or recall something later (it expects a confirmation)."""
    return bool(_KEEP_REQUEST.search(utterance))


#: why a confirmation ("Okay, I will remember that.") is not spoken in answer to a question
NO_ANSWER = 'a confirmation is no answer to a question'

#: a reply that opens with a greeting: "Nice to meet you, ..."
_OPENS_GREETING = re.compile(r"^(?:nice|good|glad|pleased|great) to meet you\b", re.I)
#: a greeting by name: "Nice to meet you, Ana."
_GREETS = re.compile(r"\b(?i:nice|good|glad|pleased|great) (?i:to meet you),?\s+([A-Z][\w'-]*)")


def greets_stranger(reply: str, utterance: str) -> str:
    """Why ``reply`` greets a name the words give nobody ('' when it does not).

    "Nice to meet you, Rahul." when nobody said "Rahul", or "Nice to meet you, Dublin." after "my family still lives
    in Dublin". A name the words say otherwise passes: speech recognition garbles the introductions the rules read
    ("robot im mateo i just moved in").
    """
    introduced = {introduced_name(utterance), introduced_other(utterance)} - {''}
    if _OPENS_GREETING.match(reply) and not introduced and asks(utterance):
        # "Nice to meet you, petrol prices will rise ...": an answer to a question from nobody new greets no one
        return 'reply greets, but the question introduces nobody'
    m = _GREETS.search(reply)
    if not m or m.group(1) in introduced:
        return ''
    name = m.group(1)
    said = re.findall(rf"\b{re.escape(name)}\b(?:'s\b)?", utterance, re.I)
    if not said or names_a_place(name, utterance) or all(w.lower().endswith("'s") for w in said):
        # "in which month is Kwame's birthday": a name said only as someone's introduces nobody
        return f'reply greets {name}, whom the words do not introduce'
    return ''


def reply_problem(reply: str, question: str, memories: Sequence[MemoryItem], min_overlap: float = 0.5,
                  asked: bool | None = None) -> str:
    """Why ``reply`` should not be spoken ('' when it is fine).

    Grounded means: of the reply's content words that the question does not already hold, at least ``min_overlap``
    occur in the memories (their own earlier answers excluded). A refusal ("I don't know.") and a short confirmation
    of a request ("Okay, I will remember that.") claim nothing, so they need no grounding; a confirmation is no answer
    when ``question`` asks (``asked``; default :func:`asks`).
    """
    text = reply.strip()
    if not text:
        return 'empty reply'
    low = text.lower()
    if any(p in low for p in _PROMPT_ECHO) or _SEGMENT_HEADER.search(text):
        return 'reply echoes the prompt'
    sentences = [s.strip().lower() for s in re.split(r'[.!?]+', text) if s.strip()]
    words = _WORD.findall(low)
    grams = [' '.join(words[i:i + 4]) for i in range(len(words) - 3)]
    stutter = any(a == b and a not in _STOP for a, b in zip(words, words[1:]))
    if len(sentences) != len(set(sentences)) or any(grams.count(g) >= 3 for g in set(grams)) or stutter:
        # "Tariq trains golf golf golf": a word said twice in a row is a decode gone round, not an answer
        return 'reply repeats itself'
    q = ' '.join(_WORD.findall(question.lower()))
    if q and q in ' '.join(words):
        return 'reply repeats the question'
    greets = greets_stranger(text, question)
    if greets:
        return greets
    added = content_words(text) - content_words(question)
    if len(sentences) == 1 and added and added <= _ACK_WORDS and not is_refusal(text):
        # "Okay, I will remember that." claims nothing, but it does not answer a question either
        return NO_ANSWER if (asks(question) if asked is None else asked) else ''
    if is_refusal(text):
        return ''
    said = question + ' ' + ' '.join(m.text for m in memories)
    unknown = names_in(text) - {w.removesuffix("'s") for w in _WORD.findall(said.lower())}
    if unknown:
        # "Yar's thermos is in the green basket.": a name of nobody the robot knows is no slip to say aloud
        return f'reply names someone the memories do not ({", ".join(sorted(unknown))})'
    if _DENIES.search(text) and not any(_DENIES.search(m.text) and content_words(m.text) & content_words(text)
                                        for m in memories):
        # "Tomasz has no allergies.": an absence no memory of the same things tells is as invented as a presence
        return 'reply denies what no memory denies'
    place = person_as_place(text, memories)
    if place:
        return f'reply says someone is from {place}, whom memory knows as a person'
    quote = misquoted(text, memories)
    if quote:
        return f'reply quotes words no memory holds together ("{quote}")'
    quote = cut_quote(text, memories)
    if quote:
        return f'reply quotes part of a sentence ("{quote}")'
    facts = [m for m in memories if not m.ref.startswith('profile:')]
    if facts:
        # what someone only asked is no evidence of an answer ("... in the last hour?" does not ground "in the last
        # hour" as the time of a meeting), unless what they said is what is asked ("what did the lady on the news
        # say?" -> 'She said: "Why did you lie to me about the money, Clara?"')
        quote = is_quote_question(question)
        known = set().union(*(content_words(evidence(m.text)) for m in memories
                              if quote or not holds_only_a_question(said_in(m))))
        new = content_words(text) - content_words(question)
        if not new:
            return 'reply adds nothing to the question'
        if len(new & known) < min_overlap * len(new):
            return f'reply not grounded in the retrieved memories ({len(new & known)}/{len(new)} new words)'
        # "Tariq likes to drink soda.": "likes" is in half the memories; what the reply claims must be in them too
        claim = {w for w in new if w not in _RELATION}
        if len(claim & known) < min_overlap * len(claim):
            return f'what the reply claims is not in the retrieved memories ({", ".join(sorted(claim - known))})'
    return ''


_QUOTED = re.compile(r'"([^"]+)"')


def misquoted(reply: str, memories: Sequence[MemoryItem]) -> str:
    """The first quote of ``reply`` whose content words no one memory holds ('' when every quote is found).

    A quote says these were someone's words: 'Kwame said: "Okay, I will remember that."' is made of words from two
    memories (and the robot's own phrase), which the word-overlap check lets through.
    """
    quotes = [q for q in _QUOTED.findall(reply) if content_words(q)]
    if not quotes:      # most replies quote nothing: the memories' words are not read for them
        return ''
    held = [content_words(evidence(m.text)) | content_words(speakable(m.text, {})) for m in memories]
    return next((q.strip() for q in quotes if not any(content_words(q) <= h for h in held)), '')


def cut_quote(reply: str, memories: Sequence[MemoryItem]) -> str:
    """The first quote of ``reply`` that stops inside a remembered sentence ('' when none does).

    'The lady on the news said: "Why did you lie to me?"' from "Why did you lie to me about the money, Clara?" holds
    together and passes :func:`misquoted`, yet drops what the sentence was about. A quote whose words open or run
    inside a sentence of a memory that goes on with more content words is cut; one that says a whole sentence of
    any memory, or marks what it leaves out ('"I walk my dog every ..."'), is not.
    """
    quotes = [_WORD.findall(q.lower()) for q in _QUOTED.findall(reply) if not q.rstrip().endswith(('...', '\u2026'))]
    quotes = [q for q in quotes if content_words(' '.join(q))]
    if not quotes:
        return ''
    sentences = [_WORD.findall(s.lower()) for m in memories
                 for s in re.split(r'(?<=[.!?:])\s+|"', said_in(m)) if s.strip()]     # "<face_3> said:" apart
    for q in quotes:
        n = len(q)
        whole = any(s == q for s in sentences)
        cut = [s for s in sentences if len(s) > n and any(s[i:i + n] == q for i in range(len(s) - n + 1))]
        if not whole and any(content_words(' '.join(s)) - content_words(' '.join(q)) for s in cut):
            return ' '.join(q)
    return ''


#: a denial ("has no allergies", "is not", "never", "doesn't")
_DENIES = re.compile(r"\b(?:no|not|never|none|nothing|nobody|nowhere)\b|n't\b", re.I)

#: where someone is from or lives: "comes from Hanoi", "lives in Nairobi", "grew up in Leeds"
_FROM_PLACE = re.compile(r"\b(?:comes? from|came from|is from|are from|lives? in|lived in|grew up in|was born in|"
                         r"was raised in|moved from)\s+([A-Z][\w'-]*)")


def person_as_place(reply: str, memories: Sequence[MemoryItem]) -> str:
    """The name of a person memory knows that ``reply`` gives as a place ('' when none).

    "Leila comes from Jamal.": a hometown the words of a profile name as a person is a slip, however grounded its
    words are.
    """
    people = {n.lower() for n in face_names(memories).values()}
    return next((m.group(1) for m in _FROM_PLACE.finditer(reply) if m.group(1).lower() in people), '')


def names_in(text: str) -> set[str]:
    """The names ``text`` says (lower case): capitalised words inside a sentence, and an opening one's possessive.

    "Yar's thermos is in the basket." names "yar"; "The keys are with Ana." names "ana"; "Lunch is at ten." none.
    A function word ('said, "Where ...') or a letter of a code ("F2") is no name.
    """
    names: set[str] = set()
    # a quote or what follows a colon opens with a capital too ('The man said: "And so ..."')
    for sentence in re.split(r'(?<=[.!?:])\s+|\s*"\s*', text.strip()):
        words = re.findall(r"[A-Za-z]+(?:'s)?", sentence)
        for i, w in enumerate(words):
            bare = w.removesuffix("'s")
            if w[0].isupper() and len(bare) > 1 and bare.lower() not in _STOP and (i > 0 or w.endswith("'s")):
                names.add(bare.lower())
    return names


def supported(word: str, heard: set[str]) -> bool:
    """Whether a word was heard: as said, as another form of it, or as part of a compound.

    "works" / "work", "celebration" / "celebrate", "bird" / "birdwatching".
    """
    return any(stem(word) == stem(h) or (len(word) >= 4 and word in h) or (len(h) >= 4 and h in word) for h in heard)


def unsupported(text: str, sources: str) -> set[str]:
    """The content words of ``text`` that ``sources`` holds in no form (:func:`supported`)."""
    heard = content_words(sources)
    return {w for w in content_words(text) if not supported(w, heard)}


#: what JSON leaves in text ('..."}', '"]}', '{"'): a model trained to write memory JSON that strays into it
_JSON_RESIDUE = re.compile(r'["\]}]\s*[\]}]|[{\[]\s*"|"\s*:\s*[\["{]')


#: an id where a name or a place belongs ("is called <face_4>", "comes from <face_3>")
_ID_AS_WORD = re.compile(r"\b(?:is called|named|comes? from|lives? in|is from)\s+<(?:face|voice)_", re.I)


def prose_problem(text: str, instructions: Sequence[str], sources: str, json_ok: bool = False) -> str:
    """Why ``text`` (a model summary of ``sources``, asked for by ``instructions``) is not prose to keep; '' if it is.

    The memory adapter is trained to write the memory JSON, not paragraphs: asked for one it may repeat the request
    ("Summarize these events ... - saw Ana"), leave JSON behind ('... in January."]}'), run on into tokens of
    another script ("фика") or say one thing over and over. Kept, any of these would be read back from S_g or a
    profile as memory. ``json_ok``: ``text`` is one JSON object, as a profile may be written.
    """
    said = ' '.join(text.split()).lower()
    if any(' '.join(i.split()[:3]).lower() in said for i in instructions if i.strip()):
        return 'model summary repeats its instruction'
    if not json_ok and _JSON_RESIDUE.search(text):
        return 'model summary is not prose (JSON left in it)'
    parts = [' '.join(_WORD.findall(x.lower())) for x in re.split(r'[.!?]+', text)]
    parts = [x for x in parts if x]
    if len(parts) != len(set(parts)):
        return 'model summary repeats itself'
    if _ID_AS_WORD.search(text):
        # "Noor is called <face_4> is called <face_1>.", "<face_2> comes from <face_3>": ids strung into the forms
        return 'model summary gives an id as a name or a place'
    foreign = sorted({c for c in text if c.isalpha() and ord(c) > 0x24F and c not in sources})
    if foreign:
        return f'model summary has letters its texts lack ({"".join(foreign[:5])})'
    return ''


def stem(word: str) -> str:
    """A word's first five letters, without a possessive or an -s/-ed/-ing ending.

    "works" and "work", "celebration" and "celebrate", "allergies" and "allergic", "glasses" and "glass" agree.
    """
    w = word.split("'")[0]
    for end in ('ing', 'ed', 's'):
        if w.endswith(end) and len(w) - len(end) >= 3 and not w.endswith('ss'):
            w = w[:-len(end)]
            break
    return w[:5]


def speakable(text: str, names: dict[str, str]) -> str:
    """A memory as a sentence to say: no time-span prefix, no earlier answer, faces by name (or "a person")."""
    text = evidence(_SPAN.sub('', text.strip()))
    if text.startswith('saw '):         # an episodic entry: 'saw X; labels; heard "Y"' (labels said once each)
        seen, sep, rest = text[4:].partition('; heard ')
        seen = '; '.join(', '.join(dict.fromkeys(part.split(', '))) for part in seen.split('; '))
        text = 'I saw ' + seen + (' and heard ' + rest if sep else '')
    text = _FACE.sub(lambda m: names.get(m.group(0), 'a person'), text)
    text = _VOICE.sub(lambda m: '' if m.group(1) else 'a person', text).strip()
    return text if text.endswith(('.', '!', '?', '."', '!"', '?"')) else text + '.'
