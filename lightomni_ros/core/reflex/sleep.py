# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Sleep time (Algorithm 1, C.2): queued interactions become Topics; robust parsing of the memory pass's output.

The memory adapter is asked for JSON. Its reply is parsed leniently (first JSON object, trailing commas, single
quotes, code fences); when nothing usable comes out, a Topic is still produced from the segment itself by rules
(transcript as audio, faces and tags as visual, "remember that ..." found by a pattern and "remind me to ..." by the
time parser) and labelled ``fallback-parser`` with the reason, never a crash.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime as _dt
import json
import logging
import re
import threading
from typing import AbstractSet, Any, Sequence

from ..text import (TOWN_BEFORE, UNSEEN_SPEAKER, WHEN_WORDS, introduced_name, introduced_other, may_be_name,
                    names_a_place, said_as_name, sentences)
from ..timeparse import reminder_intent
from ..topic import ReminderIntent, TopicData
from .attribution import MY, PERSON_ID, as_opinion, attributed, in_third_person, one_speaker, said_names, talkers
from .grounding import asks, asks_to_keep, content_words, promises_to_keep, stem, supported
from .placement import placed_by_sight, with_placements
from .schedule import with_schedule
from .types import SegmentInput

log = logging.getLogger('lightomni.reflex')

#: asking the robot to keep something: "remember (that) ...", "note that ...", "keep in mind (that) ..."
_REMEMBER = re.compile(r'(?:remember (?:that\s+)?|\bnote that\s+|\bkeep (?:it |this )?in mind(?: that\s+|[,:]\s*|\s+))'
                       r'(?P<fact>[^.!?]+)', re.I)
#: "remember" that asks nothing of the robot ("I can't remember where ...", "do you remember ...")
_NOT_ASKED = re.compile(r"\b(?:trying to|try to|can't|cannot|couldn't|don't|didn't|do you|did you|you|I|we)\s+$", re.I)
_SELF_NAMED = re.compile(r"^([A-Z][\w'-]*) is called ([A-Z][\w'-]*)\.?$")


def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in ``text``, repairing common model mistakes; None when there is none."""
    text = re.sub(r'```(?:json)?', '', text)
    start = text.find('{')
    if start < 0:
        return None
    depth, end = 0, -1
    for i, ch in enumerate(text[start:], start):
        if ch == '{':
            depth += 1
        elif ch == '}':
            depth -= 1
            if depth == 0:
                end = i + 1
                break
    cand = text[start:end] if end > 0 else text[start:] + '}' * depth
    for attempt in (cand, re.sub(r',\s*([}\]])', r'\1', cand),
                    re.sub(r',\s*([}\]])', r'\1', cand.replace("'", '"'))):
        try:
            obj = json.loads(attempt)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            return obj
    return None


_FIELD = re.compile(r'"(?P<key>\w+)"\s*:\s*(?P<value>\[[^\]]*\]?|"(?:[^"\\]|\\.)*")')
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')


def salvage_fields(text: str) -> dict[str, Any] | None:
    """The complete fields of a reply that is no JSON object; None when it has none.

    A small model sometimes breaks one separator ('"visual": "...";') or is cut off inside its last string: the fields
    before the break are still what it meant. Only whole strings count (a string cut off by the token limit is left
    out), and of a list only its whole strings.
    """
    out: dict[str, Any] = {}
    for m in _FIELD.finditer(text):
        value = m.group('value')
        if value.startswith('['):
            out.setdefault(m.group('key'), [json.loads(f'"{v}"') for v in _STRING.findall(value)])
        else:
            out.setdefault(m.group('key'), json.loads(value))
    return out or None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, list):
        return [str(v).strip() for v in value if isinstance(v, (str, int, float)) and str(v).strip()]
    return []


def find_reminders(text: str, now: float, face_id: str = '', tz: _dt.tzinfo | None = None) -> list[ReminderIntent]:
    """Time intents such as "remind me to take the pills in three minutes" (read by core.timeparse)."""
    found = reminder_intent(text, now, tz, face_id)
    return [found] if found else []


def find_remembered(text: str) -> list[str]:
    """Explicit "remember that ..." items; "do you remember my drink?", "I'm trying to remember where ..." are none."""
    out = []
    for sentence in sentences(text):
        if asks(sentence):
            continue
        out += [m.group('fact').strip(' ,.') for m in _REMEMBER.finditer(sentence)
                if m.group('fact').strip(' ,.') and not _NOT_ASKED.search(sentence[:m.start()])]
    return out


def remembered_in(seg: SegmentInput) -> list[str]:
    """The "remember that ..." items of the segment's words, as memory stores them.

    Said by the one person heard, "my" is theirs ("my car keys are in the blue drawer" -> "<face_1>'s car keys are in
    the blue drawer.", named by :func:`by_name` where memory knows the face): stored as said, "my" would be whoever
    later reads it. The rest of the words are kept.
    """
    owner = one_speaker(seg)
    items = find_remembered(seg.utterance)
    if owner:
        items = [MY.sub(f"{owner}'s", item) for item in items]
    return [item[:1].upper() + item[1:] + '.' for item in items]


def distinct(facts: list[str]) -> list[str]:
    """``facts`` without repeats (case and final stop aside) and without naming facts that name nobody new.

    The small adapter sometimes writes a fact twice, or "Kwame is called Kwame." after "<face_3> is called Kwame.".
    """
    seen_: set[str] = set()
    out = []
    for fact in facts:
        key = fact.strip().rstrip('.').lower()
        m = _SELF_NAMED.match(fact.strip())
        if key in seen_ or (m and m.group(1) == m.group(2)):
            continue
        seen_.add(key)
        out.append(fact)
    return out


def says_less(fact: str, pinned: list[str]) -> bool:
    """Whether every word ``fact`` claims (besides people and the stored forms) is in one of the ``pinned`` items.

    A naming fact never says less: it tells who someone is, which the consolidator learns only from facts.
    """
    if _NAMED.search(fact):
        return False
    words = {stem(w) for w in content_words(PERSON_ID.sub(' ', fact))} - _FORM_STEMS
    return bool(words) and any(words <= {stem(w) for w in content_words(p)} for p in pinned)


#: a question that tells ("Did you know Gloria is a chef?", "guess what, ...")
_TELLS_ASKING = re.compile(r"\b(?:did you know|do you know that|you know that|guess what|did you hear that)\b", re.I)


def only_asks(words: str) -> bool:
    """Whether every sentence of ``words`` asks a question ("Robot, what did you see in the video clip?")."""
    said = sentences(words)
    return bool(said) and all(asks(s) for s in said)


def quoted(seg: SegmentInput) -> list[str]:
    """What each speaker said, quoted: "<face_0> said: ...", "<voice_2>, an unseen speaker (...) said: ...".

    One item per run of one speaker's turns; a turn that only asks is none (the episode keeps what was asked).
    """
    verb = 'typed' if seg.typed_text.strip() else 'said'
    return [f'{who} {verb}: {words}' for who, words in seg.said() if not only_asks(words)]


def broadcast(seg: SegmentInput, response: str, heard_alone: AbstractSet[str] = frozenset()) -> bool:
    """Whether the segment was a broadcast, as far as the robot can tell: a radio or a TV.

    Only voices spoke, to nobody (:func:`voices_only`), and nobody was in view, or every voice was one heard that way
    before (``heard_alone``, :func:`alone_voices`: the TV again, now with people watching). What such a voice says
    ("The swimming pool reopens on Thursday.") is news heard, not what the household told the robot: it stays stored
    as that voice's words (:func:`quoted`), not as a fact of its own; what it says of itself ("<voice_2> works as a
    nurse.") stays, for the person the voice may turn out to be. Any other voice no face was seen with, with people
    in view, is as often one of them (turned away, at the edge of the frame) as a TV: the memory pass, trained on
    both, tells the news from what the household says by the words.
    """
    if not voices_only(seg, response):
        return False
    voices = unlinked_voices(seg)
    return not seg.face_ids or bool(voices) and voices <= heard_alone


def unlinked_voices(seg: SegmentInput) -> set[str]:
    """The voice ids of the turns no face is linked to."""
    return {t.voice_id for t in seg.turns if t.voice_id and not t.face_id and t.text.strip()}


def alone_voices(seg: SegmentInput, response: str) -> set[str]:
    """The voices of a broadcast heard with nobody in view (none for any other segment)."""
    return unlinked_voices(seg) if not seg.face_ids and voices_only(seg, response) else set()


def voices_only(seg: SegmentInput, response: str) -> bool:
    """Whether only voices no face was seen with spoke, to nobody: nothing typed, no request to keep, robot quiet."""
    who = talkers(seg)
    return bool(who) and not seg.typed_text.strip() and not response.strip() and \
        not asks_to_keep(seg.utterance) and all(w.startswith('<voice_') or w == UNSEEN_SPEAKER for w in who)


def news(facts: list[str]) -> list[str]:
    """The facts of a broadcast that are not about the voice that said them (:func:`broadcast`)."""
    return [f for f in facts if not f.startswith('<voice_')]


def reread(seg: SegmentInput, topic: TopicData, heard_alone: AbstractSet[str] = frozenset()) -> bool:
    """Whether the memory pass's reading of ``seg`` deserves a second look (beam readings, best first).

    The greedy reply was no JSON, or only its complete fields could be read (a decode gone astray mid-list:
    ``{"remembered": ["<face_3>'sola ...``), the checks dropped a fact it claimed (it misread the words: "<face_3>
    comes from the bedroom table." after "Heads up, lunch is at four."), or it kept no fact though someone told
    something (a statement, not only a question: "I stuck the torch under the bed."). A broadcast keeps no fact of its
    own either way (:func:`broadcast`), and what voices no face was seen with said among people is not searched for a
    fact the greedy reading did not keep (:func:`voices_only`: the TV the household watches is read once).
    """
    if topic.producer != 'memory-adapter' or topic.repaired:
        return True
    if voices_only(seg, topic.response) and (not topic.dropped or broadcast(seg, topic.response, heard_alone)):
        return False
    if topic.dropped:
        return True
    return not topic.semantic and tells(seg)


def tells(seg: SegmentInput) -> bool:
    """Whether someone in ``seg`` told something (a statement, not only questions)."""
    return any(not only_asks(words) for _, words in seg.said())


def better_reading(greedy: TopicData, readings: Sequence[TopicData], told: bool = True) -> TopicData:
    """The first of ``readings`` (best first) whose facts all passed the checks, else ``greedy``.

    It must be whole JSON and keep at least as many facts as ``greedy``, and some fact unless ``greedy`` was only
    partly read. When ``greedy`` was no JSON (the rules wrote it from the words: "<face_3> said: ..."), any whole
    reading with a fact or an item to keep is better, or with none when nobody told anything (``told``; a question
    keeps no fact). Its ``reading`` says which beam it was (1-based).
    """
    adapter = greedy.producer == 'memory-adapter'
    for rank, topic in enumerate(readings, 1):
        if topic.producer != 'memory-adapter' or topic.repaired or topic.dropped:
            continue
        if adapter:
            ok = len(topic.semantic) >= len(greedy.semantic) and bool(topic.semantic or greedy.repaired)
        else:
            ok = bool(topic.semantic or topic.remembered) or not told
        if ok:
            topic.reading = rank
            return topic
    return greedy


def untold(seg: SegmentInput, topic: TopicData) -> list[str]:
    """The statements of ``seg`` that no fact or item of ``topic`` tells of, when one speaker said two or more.

    The adapter, trained mostly on one fact a segment, often keeps one of two ("I react badly to pollen. At home I
    look after a tortoise called Sheldon." gave the tortoise alone); each statement left is read alone
    (:func:`one_sentence`). A question, typed words, several speakers or voices no face was seen with talking to
    nobody (:func:`voices_only`) are not split.
    """
    said = seg.said()
    if len(said) != 1 or seg.typed_text.strip() or voices_only(seg, topic.response):
        return []
    told = [s for s in sentences(said[0][1]) if not asks(s)]
    if len(told) < 2:
        return []
    kept = {stem(w) for f in topic.semantic + topic.remembered
            for w in content_words(PERSON_ID.sub(' ', f)) - FORM_WORDS}
    return [s for s in told if not {stem(w) for w in content_words(s)} & kept]


def one_sentence(seg: SegmentInput, sentence: str) -> SegmentInput:
    """``seg`` with ``sentence`` as all that was said (same time, faces, labels and speaker)."""
    spoken = [t for t in seg.turns if t.text.strip()]
    turns = [dataclasses.replace(spoken[0], end=spoken[-1].end, text=sentence)] if spoken else []
    return dataclasses.replace(seg, transcript=sentence, turns=turns)


def fallback_topic(seg: SegmentInput, response: str, problem: str, tz: _dt.tzinfo | None = None) -> TopicData:
    """A Topic built from the segment alone by rules, labelled ``fallback-parser``."""
    said = seg.utterance
    visual = seen(seg)
    semantic = with_introductions(quoted(seg), seg)
    # a voice linked to a face out of view still ties what was said to that person's profile
    heard_faces = [t.face_id for t in seg.turns if t.face_id and t.text.strip()]
    return TopicData(segment_id=seg.segment_id, start=seg.start, end=seg.end,
                     face_ids=list(dict.fromkeys(list(seg.face_ids) + heard_faces)),
                     semantic=semantic, remembered=by_name(semantic + remembered_in(seg))[len(semantic):],
                     visual=visual, audio=said,
                     response=response, raw_refs=[seg.audio_uri] if seg.audio_uri else [],
                     reminders=find_reminders(said, seg.end, seg.face_ids[0] if seg.face_ids else '', tz),
                     producer='fallback-parser', problem=problem)


_CALLED = re.compile(r'\bcalled (<?\w+>?)', re.I)     # the name given, or an id given as one
#: the name a naming fact gives ("<face_1> is called Ana."), or none ("Ingrid is called.")
_NAMED = re.compile(r"\b(?:is|was) called\b\W*([\w'<>-]*)", re.I)
#: a fact that opens with a list of people ("<face_2>, <face_1> has orange juice."): the segment's "who is in view"
#: copied, not a fact about anyone
_PEOPLE_LIST = re.compile(rf'\s*{PERSON_ID.pattern}\s*,\s*{PERSON_ID.pattern}')
#: a fact that opens as the segment's description does, its people (ids or names) then a semicolon ("<face_2>, Mei,
#: <face_5>; table tennis."): the description copied, whatever words follow
_DESCRIBED = re.compile(rf"\s*(?:{PERSON_ID.pattern}|[A-Z][\w'-]*)(?:\s*,\s*(?:{PERSON_ID.pattern}|[A-Z][\w'-]*))*\s*;")
#: a fact in lower case: words copied from inside a sentence (no fact of the training data opens so)
_CLAUSE = re.compile(r'\s*[a-z]')
#: a fact that says nothing of anyone: it opens without a subject ("Been read by K7.", a clip's words; "As a
#: photographer works.", a clause's opening), or a person
#: is followed by a place with no verb between ("Joe in the attic.", after "I bought my ticket in the attic")
_NO_STATEMENT = re.compile(r"\s*(?:(?i:been|being|be|is|are|was|were|has|have|had|do|does|did|will|would|can|could|"
                           r"should|may|might|must|in|on|at|to|for|with|by|from|of|and|but|or|so|then|also|just|"
                           r"never|not|now|as|because|while|if|although|though|when)\b|"
                           r"(?:<(?:face|voice)_\d+>|[A-Z][\w'-]*)\s+(?i:in|on|at|under|behind|near|by|inside|beside|"
                           r"next to|into|onto)\b)")


def names_a_thing(name: str, words: str) -> bool:
    """Whether ``words`` give ``name`` to something ("a dog called Pepper", "my car named Betsy"), not to a speaker."""
    return bool(re.search(rf"\b(?:a|an|the|my|our|his|her|their)\s+(?:[\w-]+\s+){{0,2}}(?:called|named)\s+"
                          rf"{re.escape(name)}\b", words or '', re.I))


#: words said just before where a thing was put ("behind the front door", "in my bag"): a place of a thing, not a
#: place someone comes from
_PUT = re.compile(r"\b(?:behind|under|beneath|inside|into|onto|on|beside|next to|in)\s+(?:the|my|your|his|her|our|"
                  r"their|a|an)\s+$", re.I)
#: the hometown form ("Ben comes from Porto."): who, and where from
_COMES_FROM = re.compile(r"^(.*?)\s+comes? from (?:the\s+)?([^.]+)", re.I)


def town_heard(fact: str, words: str) -> bool:
    """Whether the town of a hometown fact ("Ben comes from Porto.") was said as where someone is from.

    The small adapter writes the form over any place it heard or saw: "Kwame comes from studio couch." (a frame
    label), "Pablo comes from the bathroom cabinet." ("I dropped my camera in the bathroom cabinet"), "Olek comes
    from Olek." (a name called out), "Dublin comes from the cafe." ("the new cafe was a mess"). The town must be
    said as a town ("lives in Dublin", "from Porto", "Osaka is where I was born"), not where a thing was put, and
    not be the person.
    """
    m = _COMES_FROM.match(fact.strip())
    if not m:
        return True
    who, town = m.group(1).strip(), m.group(2).strip()
    words = words or ''
    said = list(re.finditer(rf"\b{re.escape(town)}\b", words, re.I))
    return town.lower() != who.lower() and any(
        TOWN_BEFORE.search(words[:x.start()]) and not _PUT.search(words[:x.start()])
        or re.match(r"\s+is where\b", words[x.end():], re.I) for x in said)


#: a fact that puts someone somewhere ("Tariq is under the bed."): who, and where
_AT_PLACE = re.compile(r"^(.*?)\s+(?:is|was)\s+((?:in|on|at|under|behind|beside|inside|next to|on top of|near)\s+"
                       r"[^.]+)", re.I)
#: who a place was said of, just before it: a person ("I'm ", "we are still ", "she's now ")
_PERSON_AT = re.compile(r"\b(?:i'm|i am|i was|i'll be|we're|we are|we were|he's|he is|he was|she's|she is|she was|"
                        r"they're|they are)\s+(?:still\s+|now\s+|already\s+)?$", re.I)


def person_at(fact: str, people: set[str]) -> bool:
    """Whether ``fact`` says where a person is ("<face_1> is in the garden."; ``people``: lower-case names)."""
    m = _AT_PLACE.match(fact.strip())
    return bool(m) and bool(PERSON_ID.fullmatch(m.group(1)) or m.group(1).lower() in people)


def place_heard(fact: str, words: str, people: set[str], labels: Sequence[str] = ()) -> bool:
    """Whether a fact that puts a person somewhere was said of that person, not of a thing.

    "Robot, I'm Tariq, keep in mind that the thermos is under the bed." tells where the thermos is; the adapter's
    "Tariq is under the bed." moves the place onto the speaker, "Giulia is at three." after "lunch is at three" a
    time, "<face_1> is at lunch." after "update: lunch got moved to two" puts someone where nobody said
    (``people``: the lower-case names of those in view or introduced; an id counts as a person too). Where a person
    is must be said of a person ("I'm in the kitchen", "Ana is in the garden"), or seen (a frame label: "<face_1> is
    in the garden." with the label "garden").
    """
    if not person_at(fact, people):
        return True
    m = _AT_PLACE.match(fact.strip())
    if any(re.search(rf"\b{re.escape(label)}\b", m.group(2), re.I) for label in labels if label.strip()):
        return True
    named = [rf"\b{re.escape(n)}\s+(?:is|was)\s+(?:still\s+|now\s+)?$" for n in people if n]
    said = [x.start() for x in re.finditer(re.escape(m.group(2).strip()), words or '', re.I)]
    return any(_PERSON_AT.search(words[:x]) or any(re.search(p, words[:x], re.I) for p in named) for x in said)


def said_at(word: str, words: str) -> list[int]:
    """Where ``word`` was said in ``words``, as a whole word (offsets, any case)."""
    return [x.start() for x in re.finditer(rf"\b{re.escape(word)}\b", words or '', re.I)]


#: a fact of owning ("Tariq has a photographer."): what is owned
_HAS_A = re.compile(r"^.*?\s+(?:has|had|owns)\s+(an?\s+[^.]+?)\.?$", re.I)
#: what opens a thing someone has ("a dog", "my sister", "two cats")
_OWNED = re.compile(r"\b(?:a|an|my|our|one|two|three|some|his|her|their)\s+(?:[\w-]+\s+)?$", re.I)
#: what a role or trade is said after ("I have been a photographer", "as a nurse", "I'm a chef"): not owned
_BE_A = re.compile(r"\b(?:i am|i'm|i was|been|being|as|became|become)\s+$", re.I)


def owned_heard(fact: str, words: str) -> bool:
    """Whether what a fact says someone has ("Tariq has a dog called Pepper.") was said as owned, not as what they are.

    "I have been a photographer for ten years." says what Tariq is; the adapter's "Tariq has a photographer." (the
    words' "have" and "a photographer" put together) says he keeps one. "Mei has a cat hair." after "I react badly to
    cat hair" owns nothing either: the thing must be said as one ("a dog", "my sister").
    """
    m = _HAS_A.match(fact.strip())
    if not m:
        return True
    said = said_at(m.group(1).split()[1], words)
    # what is owned is said as a thing ("a dog", "my sister"), not only as what someone reacts to ("to cat hair");
    # a noun not said at all is the stored form's ("has a birthday in July" after "I was born in July")
    return not said or any(_OWNED.search(words[:x]) and not _BE_A.search(_OWNED.sub('', words[:x])) for x in said)


#: a fact of a trade ("Ana works as a nurse."): the trade's first word
_WORKS_AS = re.compile(r"^.*?\s+works?\s+as\s+(?:an?\s+)?([\w-]+)", re.I)
#: what a trade is said after: an article or "as" ("I'm a nurse", "as a cook", "as cook"), one word between at most
_ROLE_BEFORE = re.compile(r"\b(?:a|an|as)\s+(?:[\w-]+\s+)?$", re.I)


def trade_heard(fact: str, words: str) -> bool:
    """Whether the trade of a work fact ("Ana works as a nurse.") was said as what someone is.

    The adapter writes the form over any noun it heard: "Joe works as a robot." after "Hello, Robot. My name is
    Maria ..." (the robot addressed), "Merak works as a hammer." after "I brought my hammer ..." (a thing). A trade
    is said after an article or "as" ("I'm a nurse", "as a carpenter I start early", speech recognition's "I work on
    a teacher"); a trade not said at all is left to the word check. A workplace ("Merak works in the cellar.") must
    be said with work as what someone does ("I work in the cellar"), not as a thing ("I put my work in the cellar").
    """
    if _WORKS_IN.match(fact.strip()):
        # "Merak works in the cellar." after "I put my work in the cellar": work said as a thing, not as what she does
        return any(not _THING_BEFORE.search(words[:m.start()]) for m in _WORK_IN_SAID.finditer(words))
    m = _WORKS_AS.match(fact.strip())
    if not m:
        return True
    said = said_at(m.group(1), words)
    return not said or any(_ROLE_BEFORE.search(words[:x]) for x in said)


#: a fact of a workplace ("Ana works in the cellar.") and how one is said ("I work at the bakery")
_WORKS_IN = re.compile(r"^.*?\s+works?\s+(?:in|at|from)\b", re.I)
_WORK_IN_SAID = re.compile(r"\bwork(?:s|ed|ing)?\s+(?:in|at|from)\b", re.I)
#: the words before a noun: "my work", "the work"
_THING_BEFORE = re.compile(r"\b(?:my|your|his|her|our|their|the|a|this|that|some)\s+$", re.I)


#: a fact of an allergy ("Mei is allergic to pollen.", "Mei has an allergy to pollen."): what it is to
_ALLERGIC = re.compile(r"^.*?\s+(?:(?:is|was|are)\s+allergic|has\s+(?:an?\s+)?allerg(?:y|ies))\s+to\s+(?P<what>[^.]+)",
                       re.I)
#: how people say they cannot have something: an allergy, what it does to them, keeping away from it
_ALLERGY_SAID = re.compile(r"\b(?:allerg\w*|react\w*|rash(?:es)?|hives|itch\w*|sneez\w*|swell\w*|intoleran\w*|"
                           r"sick|ill|avoid\w*|(?:stay|keep)s?\s+away|anaphyla\w*|epipen|"
                           r"(?:can ?not|can't|must not|mustn't|never)\s+(?:eat|have|drink|touch|go near|be near))\b",
                           re.I)


def allergy_heard(fact: str, words: str) -> bool:
    """Whether an allergy fact was said as one: "<face_8> is allergic to red." after "Lay red with P9 again." was not.

    Any way of saying it counts ("I react badly to ...", "... makes me ill", "I have to stay away from ...", "I
    can't eat ..."), in the sentence that names what it is to: "<face_3> has allergy to orange juice." after "No cat
    hair for me please, allergy. My usual order is orange juice." joins two sentences (the word check does the rest).
    """
    m = _ALLERGIC.match(fact.strip())
    if not m:
        return True
    what = {stem(w) for w in content_words(m.group('what'))}
    return any(_ALLERGY_SAID.search(s) and (not what or what & {stem(w) for w in content_words(s)})
               for s in sentences(words or ''))


#: a birthday fact ("Ana has a birthday in July.", "Ana's birthday is in July."): when it is said to be
_BIRTHDAY = re.compile(r"^.*?(?:\s+has\s+(?:a\s+)?|'s\s+)birthday\s+(?:is\s+)?(?:in|on|at)\s+([^.]+)", re.I)
#: words that can say when a birthday is, besides the calendar's names and numbers
_WHEN = WHEN_WORDS | {'new'}       # "at new year"


#: words that say a birthday: "I celebrate my birthday in May", "I was born in May", "I turn a year older in May",
#: "my party is in May every year"
_BIRTH_SAID = re.compile(r"\b(?:birthdays?|born|birth|b-?day|year older|turn(?:s|ing)? (?:\d+|[a-z]+ty)|"
                         r"(?:party|celebration)\b[^.]*\bevery year)\b", re.I)


def birthday_heard(fact: str, words: str | None = None) -> bool:
    """Whether a birthday fact says a time, not a place, and (given ``words``) a birthday was spoken of.

    "Joe has a birthday in the attic." (after "I bought my ticket in the attic.") puts the form over a place, and
    "<face_1> has a birthday in Thursday." (after "they set the budget review for Thursday") or "<face_3>'s birthday
    is on Friday." (after "the school trip is on Friday") over a time nobody said was a birthday.
    """
    m = _BIRTHDAY.match(fact.strip())
    return not m or any(w in _WHEN or re.fullmatch(r"\d+(?:st|nd|rd|th)?", w)
                        for w in re.findall(r"[\w']+", m.group(1).lower())) \
        and (words is None or bool(_BIRTH_SAID.search(words)))


#: words of the third-person forms the memory pass writes ("<face_2> likes to drink tea.", "Ana is called ...", "Ben
#: comes from Porto.", "Ana found the film boring."): they say how a fact is stored, not something heard
FORM_WORDS = frozenset('called likes drink enjoys comes works allergic plays birthday found thinks has'.split())
_FORM_STEMS = frozenset(stem(w) for w in FORM_WORDS)


#: an exclamation: "What a long day it has been.", "Oh, what a finish!" (a question "what a ... is it?" asks)
_EXCLAIMED = re.compile(r"^\W*(?:(?:oh|wow|well|gosh|man),?\s+)?what an?\s+(?!.*\?\s*$)", re.I)


def stated(words: str) -> list[str]:
    """The sentences of ``words`` that can state a fact: not exclamations ("What a long day it has been.")."""
    return [s for s in sentences(words or '') if not _EXCLAIMED.match(s)]


def heard_facts(facts: list[str], seg: SegmentInput, names: dict[str, str] | None = None) -> tuple[list, list]:
    """(kept, dropped): what a fact claims must have been said, typed or labelled in the segment.

    A small memory adapter sometimes writes a fact that the segment does not support ("Mei likes to drink coffee."
    after "I spend my free time birdwatching.", "Kwame has a software engineer's first name."): stored, it would be
    recalled as truth. So every word of a fact needs support in the segment, except the words of the stored forms
    (:data:`FORM_WORDS`) and the names of the people in view; and the people a fact is about must be there: a face or
    voice id of the segment, or a name said in it (a name memory knows is no evidence that its owner said anything).
    A name a fact gives someone ("... is called Giulia") must have been said, whoever is in view (an id is no name;
    nor is a frame label: "<face_1> is called Loupe." after a frame of a face labelled "loupe"),
    and be one: "<face_1> is called December." after "my birthday is in December" names nobody, nor does "<face_3>
    is called Pepper." after "I look after a dog called Pepper" (:func:`names_a_thing`), nor "<face_3> is called
    Dublin." after "my family lives in Dublin" (:func:`names_a_place`), nor "<face_2> is called Espresso." after "I
    could use some espresso" (:func:`~..text.said_as_name`), nor a fact that ends at "called"; a calendar
    word is a name only where an introduction gives it ("I'm April"), and a name the words only call out ("Sofia, I
    really enjoyed the cafe.") is the one addressed, given to nobody. A hometown fact needs its town said as one
    (:func:`town_heard`), a place a thing is at one said, not a frame label alone (:func:`~.placement.placed_by_sight`:
    "<face_2> has a notebook on the table." after "I dropped my notebook on top of the fridge" in view of a dining
    table), a place a person is at one said of them or seen, not said of a thing (:func:`place_heard`: "Tariq is
    under the bed." after "I'm Tariq, ... the thermos is under the bed."), what a person has one said as owned, not
    as what they are (:func:`owned_heard`: "Tariq has a photographer." after "I have been a photographer"), a trade
    one said as what someone is (:func:`trade_heard`: not "Joe works as a robot." after "Hello, Robot"), an allergy
    one said as an allergy (:func:`allergy_heard`), a birthday one at a time, of a birthday spoken of
    (:func:`birthday_heard`). A fact made of the forms and people's names alone ("Sofia likes to drink.") tells
    nothing (a naming fact tells the name), nor does one written as the description, its people then a semicolon
    ("Mei; balcony, bedroom."; "<face_2>, Mei, <face_5>; table tennis." after "I train for table tennis"). A fact
    that opens with a list of people ("<face_1>, <face_2> is forecast for the
    mountains.", after a weather report) copies who was in view and is about nobody. Two words state nothing about
    anyone: "Bimblo F2." after "Bimblo F2 now." is the words, not a fact; nor are words with no subject ("Been
    read by K7.") or a person and a place with no verb between ("Joe in the attic."). An exclamation states nothing
    either: its words support no fact ("Jamal has a long day." after "What a long day it has been.", :func:`stated`).
    """
    heard = {w.split("'")[0] for w in content_words(' '.join([*stated(seg.utterance), *seg.visual_tags]))}
    # frame labels support a fact's words ("<face_1> is in the garden."), but one written as the description is
    # ("people; labels") and made of nothing else is the description copied: it holds them already
    spoken = {w.split("'")[0] for w in content_words(seg.utterance)}
    seen_only = heard - spoken
    # a voice heard with nobody in view is "<voice_2>, an unseen speaker ..." in the words: its id is there too
    there = {*seg.face_ids, seg.speaker_face, *(seg.turn_speaker(t) for t in seg.turns),
             *(t.voice_id for t in seg.turns)}
    in_view = {names[f].lower() for f in seg.face_ids if (names or {}).get(f)}
    introduced = {introduced_name(seg.utterance), introduced_other(seg.utterance)} - {''}
    # "Sofia, I really enjoyed the cafe": a name only called out is the one addressed, not a name given
    called = set(said_names(seg.utterance, names)[1]) - introduced
    # a fact needs a word besides the forms and people's names: "Sofia likes to drink." tells nothing
    names_here = {n.lower() for n in introduced | called} | in_view | {n.lower() for n in (names or {}).values() if n}
    people = in_view | {n.lower() for n in introduced}
    kept, dropped = [], []
    for fact in facts:
        words = {w.split("'")[0] for w in content_words(PERSON_ID.sub(' ', fact))} - in_view - FORM_WORDS
        words |= {n.lower() for n in _CALLED.findall(fact)}
        given = _NAMED.findall(fact)
        ok = (len(fact.split()) >= 3 and not _PEOPLE_LIST.match(fact) and not _DESCRIBED.match(fact)
              and not _NO_STATEMENT.match(fact)
              and set(PERSON_ID.findall(fact)) <= there
              and all(supported(w, heard) for w in words) and town_heard(fact, seg.utterance)
              and place_heard(fact, seg.utterance, people, seg.visual_tags)
              and (person_at(fact, people) or not placed_by_sight(fact, seen_only))
              and owned_heard(fact, seg.utterance) and trade_heard(fact, seg.utterance)
              and allergy_heard(fact, seg.utterance) and birthday_heard(fact, seg.utterance)
              and (words - names_here - (seen_only if ';' in fact else set()) or bool(_NAMED.search(fact)))
              and all(n in introduced or PERSON_ID.fullmatch(n)
                      or may_be_name(n) and supported(n.lower(), spoken) and said_as_name(n, seg.utterance)
                      and n not in called
                      and not names_a_thing(n, seg.utterance)
                      and not names_a_place(n, seg.utterance) for n in given))
        (kept if ok else dropped).append(fact)
    return kept, dropped


def in_heard_tense(fact: str, said: str) -> str:
    """``fact`` with its verb put back in the past tense the words said it in.

    "I really enjoyed the power cut." tells of something past; the adapter's "Ana enjoys the power cut." states a
    lasting taste nobody told. The fact's verb (the "-s" word after the person it opens with) becomes the "-ed" word
    of the same stem that was said, unless the words also say the verb in the present ("I loved it, I love it still")
    or in the perfect ("I have worked as a chef for ages": still a chef).
    """
    m = _FACT_VERB.match(fact)
    if not m:
        return fact
    heard = set(re.findall(r"[a-z]+", said.lower()))
    verb = m.group('verb')
    was = {stem(w): w for w in heard if w.endswith('ed')}.get(stem(verb))
    if not was or {verb, verb[:-1], verb.removesuffix('es')} & heard:
        return fact
    # "I have worked as a chef for ages" still works as one: only the simple past tells of a thing over
    if re.search(rf"\b(?:have|has|had|i've|we've|you've|they've)\s+(?:\w+\s+)?{was}\b", said.lower()):
        return fact
    return fact[:m.start('verb')] + was + fact[m.end('verb'):]


#: the verb of a fact about a person: "<face_2> enjoys ...", "Ingrid really enjoys ..."
_FACT_VERB = re.compile(r"^(?:<(?:face|voice)_\d+>|[A-Z][\w'-]*)\s+(?:(?:really|always|also)\s+)?(?P<verb>[a-z]+s)\b")


#: a naming fact: (the id, the name)
CALLED_FACT = re.compile(r"^(<(?:face|voice)_\d+>) is called ([A-Z][\w'-]*)\.?$")


def by_name(facts: list[str], names: dict[str, str] | None = None) -> list[str]:
    """``facts`` with each face or voice id whose name memory knows, or the same pass learned, written as the name.

    The stored forms name people ("Freya's laptop is under the bed."): a question asks by name, and the answer says
    it. The adapter is trained to name the speaker by id (it copies "<face_3>" from the segment's "<face_3> said:"
    line; ``train.pairs.speaker_by_id``), and the name comes from here: memory's, or a naming fact of the same pass
    ("<face_3> is called Freya.", "<face_3>'s laptop is under the bed."). The introduction itself keeps its id: it is
    what links the name.
    """
    known = dict(names or {})
    known.update(m.groups() for m in map(CALLED_FACT.match, facts) if m)

    def name(m: re.Match) -> str:
        return known.get(m.group(0)) or m.group(0)
    return [f if CALLED_FACT.match(f) else PERSON_ID.sub(name, f) for f in facts]


def seen(seg: SegmentInput, names: dict[str, str] | None = None) -> str:
    """What was in view, by rule: the people (who spoke marked "talking", who typed "typing"), then the frame labels.

    "<face_1> talking, <face_2>; kitchen, mug"; with nobody in view "nobody in view", with "an unseen speaker talking"
    when words were heard. With ``names`` (the names memory knows), people are named as the memory adapter is trained
    to write them, a name given in the segment too ("I'm Vera": "Vera talking, <face_2>; kitchen, mug").
    """
    known = {**(names or {}), **dict(introductions(seg))} if names is not None else {}
    typed = bool(seg.typed_text.strip())
    # the face in view while speech was heard is the speaker: "a person talking" is what was seen
    active = ({seg.speaker} if typed else talkers(seg)) if seg.utterance else set()
    people = [(known.get(f) or f) + (f' {"typing" if typed else "talking"}' if f in active else '')
              for f in seg.face_ids]
    if not people:
        people = ['nobody in view'] + (['an unseen speaker talking'] if seg.transcript.strip() else [])
    return '; '.join([', '.join(people)] + ([', '.join(seg.visual_tags)] if seg.visual_tags else []))


def memory_opening(seg: SegmentInput, saw_frames: bool = False, names: dict[str, str] | None = None) -> str:
    """The start of the memory reply that the rules know: what was seen, for a model that reads no frames.

    A text backbone sees no frames: the description it is trained to write is :func:`seen`'s with the people named
    (``names``: what memory knows), so the pass starts after it (left open: the closing quote is the first token
    the model writes). Copying it was where the small adapter went wrong: it loops ("nobody in view, nobody in view,
    ..."), misspells rare names ("Baker talking" for Barack) or writes what was said instead ("Basketball is for
    me."), and then leaves the facts out. A model that reads the frames writes its own ('').
    """
    if saw_frames:
        return ''
    return '"visual": "' + json.dumps(seen(seg, names or {}), ensure_ascii=False)[1:-1]


_FACE_IDS = re.compile(r'<face_\d+>')
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")
#: words that say who was in view and how, not what was seen
_PRESENCE = frozenset('nobody view talking typing unseen speaker person people someone'.split())


def seen_problem(visual: str, seg: SegmentInput, names: dict[str, str] | None = None, saw_frames: bool = False) -> str:
    """Why the memory adapter's description of what was seen is not what the segment showed ('' when it is).

    It says nobody was in view while someone was, or names nobody who was; and, when the model saw no frames (a text
    backbone reads faces and labels only), it marks someone talking whom perception did not hear speak, or it holds
    a word that is no frame label and no name (known to memory or said in the segment: "I'm Vera" may make "Vera
    talking"). "nobody in view, Barack likes to play." was written for
    a question about Barack: what was said is not what was seen.
    """
    low = visual.lower()
    faces = set(seg.face_ids)
    if faces and 'nobody in view' in low:
        return 'says nobody was in view'
    named = {f: n.lower() for f, n in (names or {}).items() if n}
    # a name said in the segment may name the speaker already ("I'm Vera": "Vera talking")
    said_names = {w.lower() for w in _CAPITALISED.findall(seg.utterance)}
    shown = {f for f in faces if f in visual or (f in named and named[f] in low)}
    if faces and not shown and not any(re.search(rf'\b{n}\b', low) for n in said_names):
        return 'names nobody who was in view'
    if set(_FACE_IDS.findall(visual)) - faces:
        return 'names a face that was not in view'
    if saw_frames:
        return ''
    # who talked is what perception heard and saw (the speaker's face, or a voice linked to one): with several people
    # in view and an unlinked voice, the adapter must not pick one ("Tariq talking" made a fact of what a voice said)
    for f in sorted(faces - talkers(seg)):
        marked = [f] + ([named[f]] if f in named else [])
        if any(re.search(rf'(?<![\w<]){re.escape(m.lower())}\s+talking\b', low) for m in marked):
            return f'marks {f} talking, whom perception did not hear speak'
    labels = {w.split("'")[0] for w in content_words(' '.join(seg.visual_tags))}
    known = set(named.values()) | said_names
    extra = sorted(w for w in content_words(PERSON_ID.sub(' ', visual)) - known - _PRESENCE if not supported(w, labels))
    return f'holds words nothing in the segment showed ({", ".join(extra)})' if extra else ''


def introductions(seg: SegmentInput) -> list[tuple[str, str]]:
    """(face, name) for each face perception heard give their own name, and for each one a speaker introduced.

    Someone introduced ("Robot, here is my cousin Jamal") is the one face in view besides the face heard saying it.
    """
    out = []
    for who, words in seg.said():
        if not _FACE_IDS.fullmatch(who):
            continue
        others = [f for f in seg.face_ids if f != who]
        out += [(who, introduced_name(words))] + ([(others[0], introduced_other(words))] if len(others) == 1 else [])
    return [(who, name) for who, name in out if name]


def with_introductions(semantic: list[str], seg: SegmentInput) -> list[str]:
    """``semantic`` with a naming fact ("<face_1> is called Joe.") for each face heard giving their name or introduced.

    "Hello, my name is Joe": perception knows who spoke (the face seen talking, or the one the voice is linked to)
    and the words say the name, so the rules write the naming fact; the small adapter sometimes leaves it out or puts
    the name in the description instead ("Joe talking, Barack"), and then nobody learns who the face is. Introduced
    by someone else ("here is my cousin Jamal"), the adapter gave the name to the speaker ("<face_1> is called
    Jamal." for the face saying it) or to nobody: a naming fact that gives an introduced name to another face, or
    another name to an introduced face, is left out. A face ``semantic`` already names rightly keeps its fact.
    """
    intros = dict(introductions(seg))
    given = {name: face for face, name in intros.items()}

    def wrong(fact: str) -> bool:
        m = CALLED_FACT.match(fact)
        return bool(m) and (given.get(m.group(2), m.group(1)) != m.group(1)
                            or intros.get(m.group(1), m.group(2)) != m.group(2))
    kept = [f for f in semantic if not wrong(f)]
    named = {m.group(1) for m in map(CALLED_FACT.match, kept) if m}
    return kept + [f'{who} is called {name}.' for who, name in intros.items() if who not in named]


def topic_from_reply(seg: SegmentInput, response: str, reply: str, tz: _dt.tzinfo | None = None,
                     names: dict[str, str] | None = None, saw_frames: bool = False,
                     placements: bool = True, event_times: bool = True,
                     heard_alone: AbstractSet[str] = frozenset()) -> TopicData:
    """Parse the memory adapter's reply into a Topic; repair or fall back with a reason.

    Facts the segment does not support are left out (:func:`heard_facts`, with the ``names`` memory knows; a segment
    that only asks tells none), and
    a fact about someone the words do not point to goes to the right person or is left out
    (:func:`~.attribution.attributed`), a fact left in the first person is said of the one person heard speaking or
    left out (:func:`~.attribution.in_third_person`), a judgement the speaker marked as their view ("..., if you ask
    me") is said as theirs (:func:`~.attribution.as_opinion`); the Topic's ``dropped`` lists them; people are named
    where known
    (:func:`by_name`), and a face heard giving their name gets its naming fact (:func:`with_introductions`). A
    description of what was seen that the segment did not show (:func:`seen_problem`; ``saw_frames``: the model read
    the keyframes) is replaced by the rule's (:func:`seen`); ``unseen_visual`` keeps the model's. Where a thing was
    put, when no fact or item tells of it, is read by rule (``placements``: :func:`~.placement.with_placements`;
    ``placed`` counts them), and so is when an event is (``event_times``: :func:`~.schedule.with_schedule`;
    ``timed`` counts them; a fact of the same event at another time is dropped). A broadcast keeps no fact of its own
    (:func:`broadcast`; ``heard_alone``: the voices heard as one before). When the robot
    promised to keep what it was told (``response``, :func:`~.grounding.promises_to_keep`) and the pass stored no
    fact or item, the words themselves are pinned (:func:`quoted`): a promise memory does not keep is worse than a
    quote. A reply that is no JSON gives the fields it completed (:func:`salvage_fields`;
    ``repaired`` keeps the reply), else the fallback parser's Topic.
    """
    obj = parse_json_object(reply)
    repaired = ''
    if obj is None:
        obj, repaired = salvage_fields(reply), reply
        if obj is not None and not saw_frames and not any(obj.get(k) for k in ('semantic', 'remembered', 'reminders')):
            obj = None      # the description came with the prompt (memory_opening): nothing here is the model's
    if obj is None:
        return fallback_topic(seg, response, f'memory pass reply is not JSON: {reply[:80]!r}', tz)
    semantic, dropped = heard_facts(_strings(obj.get('semantic')), seg, names)
    # a fact is written as a sentence: one opening in lower case is a clause copied from inside the words ("set a
    # reminder to check the oven in two minutes." after "Robot, tell me, set a reminder ..."); pinned items, kept
    # word for word, may open so
    dropped += [f for f in semantic if _CLAUSE.match(f)]
    semantic = [f for f in semantic if not _CLAUSE.match(f)]
    said = seg.said()
    if said and all(only_asks(words) and not _TELLS_ASKING.search(words) for _, words in said):
        # a question tells nothing: "<face_3> is called Freya." after "how does Freya like to spend weekends?"
        # (an introduction inside one is the rule's, below)
        semantic, dropped = [], dropped + semantic
    semantic = [in_heard_tense(f, seg.utterance) for f in semantic]
    semantic, misattributed = attributed(semantic, seg, names)
    semantic, first_person = in_third_person(semantic, seg)
    misattributed += first_person
    semantic = as_opinion(semantic, seg)
    # the adapter names the speaker by id; a name memory knows, or the segment gives ("I'm Barack"), replaces it
    named = {**dict(introductions(seg)), **(names or {})}
    semantic = with_introductions(by_name(semantic, named), seg)
    visual = ' '.join(_strings(obj.get('visual')))
    audio = ' '.join(_strings(obj.get('audio')))
    if not (semantic or visual or audio):
        return fallback_topic(seg, response, 'memory pass JSON has no visual/audio/semantic content', tz)
    unseen = visual if visual and seen_problem(visual, seg, names, saw_frames) else ''
    visual = seen(seg) if unseen or not visual else visual
    said = seg.utterance
    remembered, dropped_pins = heard_facts(_strings(obj.get('remembered')), seg, names)
    remembered, misattributed_pins = attributed(remembered, seg, names)
    remembered = by_name(semantic + remembered, named)[len(semantic):]
    remembered = remembered or by_name(semantic + remembered_in(seg), named)[len(semantic):]
    semantic = distinct(semantic)
    remembered = distinct(semantic + remembered)[len(semantic):]
    # "<face_2> has lunch." beside the pinned "lunch is at five": a fact that says less than an item kept word for
    # word adds nothing to it
    less = [f for f in semantic if says_less(f, remembered)]
    semantic, dropped = [f for f in semantic if f not in less], dropped + less
    # a thing put somewhere that no fact or item tells of: a verb or wording the adapter was not trained on
    put, cut = with_placements(semantic + remembered, seg) if placements else ([], [])
    cut = [f for f in cut if f in semantic]     # a pinned item keeps the words it was told in
    placed = by_name([f for f in put if f not in semantic and f not in remembered], named)
    semantic = [f for f in semantic if f not in cut] + placed
    dropped += cut
    # an event's time that no fact tells of ("they set lunch for eleven"), or that a fact misread ("... not three")
    told, retimed = with_schedule(semantic + remembered, seg) if event_times else ([], [])
    retimed = [f for f in retimed if f in semantic]     # a pinned item keeps the words it was told in
    timed = [f for f in told if f not in semantic and f not in remembered]
    semantic = [f for f in semantic if f not in retimed] + timed
    dropped += retimed
    if broadcast(seg, response, heard_alone):
        heard = news(semantic + remembered)
        dropped += heard
        semantic, remembered = [f for f in semantic if f not in heard], [f for f in remembered if f not in heard]
    if not (semantic or remembered) and promises_to_keep(response):
        # the robot said it would keep what it was told and the pass found nothing in it: the words are pinned, said
        # by the name memory knows (the consolidator learns names from the facts, never from the pinned items)
        remembered = by_name(quoted(seg), named)
    # the time parser reads the request's time (as the reflex node did when it answered); the model's own reading
    # ("in_seconds": 120 for "in one minute") only counts when the parser finds none
    reminders = find_reminders(said, seg.end, seg.face_ids[0] if seg.face_ids else '', tz)
    for r in [] if reminders else obj.get('reminders') or []:
        if isinstance(r, dict) and isinstance(r.get('in_seconds'), (int, float)) and r.get('text'):
            reminders.append(ReminderIntent(due=seg.end + float(r['in_seconds']), text=str(r['text']),
                                            face_id=seg.face_ids[0] if seg.face_ids else ''))
    return TopicData(segment_id=seg.segment_id, start=seg.start, end=seg.end, face_ids=list(seg.face_ids),
                     semantic=semantic, remembered=remembered, visual=visual, audio=audio or said, response=response,
                     raw_refs=[seg.audio_uri] if seg.audio_uri else [], reminders=reminders, producer='memory-adapter',
                     dropped=dropped + misattributed + dropped_pins + misattributed_pins, unseen_visual=unseen,
                     repaired=repaired, placed=sum(f in semantic for f in placed),
                     timed=sum(f in semantic for f in timed))


class Preemption:
    """A user request (segment) pre-empts sleep-time work between model calls; the wait is measured."""

    def __init__(self) -> None:
        self._waiting = 0
        self._halted = False
        self._lock = threading.Lock()
        self.delays_ms: collections.deque[float] = collections.deque(maxlen=256)

    def halt(self) -> None:
        """Stop every model call at its next token until :meth:`resume` (node deactivation, shutdown)."""
        self._halted = True

    def resume(self) -> None:
        """Allow model calls again."""
        self._halted = False

    def halted(self) -> bool:
        """Whether model calls must stop now."""
        return self._halted

    def request(self) -> None:
        """A user pass wants the model (sleep-time work yields at its next model-call boundary)."""
        with self._lock:
            self._waiting += 1

    def release_one(self) -> None:
        """One user request is done."""
        with self._lock:
            self._waiting = max(0, self._waiting - 1)

    def record(self, ms: float) -> None:
        """Time a user pass waited for the model."""
        self.delays_ms.append(ms)

    def pending(self) -> bool:
        """Whether sleep-time work should yield now."""
        return self._halted or self._waiting > 0
