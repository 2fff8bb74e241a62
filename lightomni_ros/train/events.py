# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Segments that are not questions: what people say to each other and to the robot, devices, silence.

Each function builds one :class:`~.stream.Said` from the stream's state (or None when it does not apply now).
Speech labels: the robot is addressed by a wake word, by typed text, or by an introduction; statements between
people, self-talk, radio and TV are not for the robot (``speech`` 0) even when they hold facts worth remembering.
"""

from __future__ import annotations

from typing import Callable

from .stream import Said, Stream, be_it, fact
from .world import ATTR_FACT, CHITCHAT, DELAYS, TRIVIA, capital

ACK = 'Thanks, I will keep that in mind.'
NOTED = 'Okay, I will remember that.'


def idle(st: Stream) -> Said:
    """Nobody speaks (people in view or not)."""
    return Said('idle', 'none', st.present() if st.rng.random() < 0.6 else [])


def state(st: Stream, addressed: bool = False) -> Said | None:
    """Someone mentions one or two of their attributes (to the others, or to the robot behind a wake word)."""
    present = st.present()
    speaker = st.speaker_of(present)
    person = present[0]
    first = st.attr_statement(person)
    parts, facts, teach = [first[0]], [first[1]], [(('attr', person.face, first[2]), first[1],
                                                   {'kw': first[1]['keywords'][0]})]
    if st.rng.random() < st.cfg.multi_fact:            # two facts in one breath
        second = st.attr_statement(person)
        if second[2] != first[2]:
            parts.append(capital(second[0]))
            facts.append(second[1])
            teach.append((('attr', person.face, second[2]), second[1], {'kw': second[1]['keywords'][0]}))
    text = ' '.join(parts)
    if speaker is None:          # nobody singled out: a first-person fact has no subject memory could name
        facts, teach = [], []
    if addressed:
        text = f'{st.wake()} ' + st.render('tell_robot', st.rng.choice(st.tpl['tell_robot']), statement=text)
        return Said('tell_robot', 'robot', present, speaker, text, speech=1, response=ACK, facts=facts, teach=teach)
    return Said('state', 'person', present, speaker, capital(text), facts=facts, teach=teach)


def about(st: Stream) -> Said | None:
    """Someone tells the others an attribute of a person by name ("Ana works as a nurse, you know.")."""
    keys = [k for k in st.tpl if k.startswith('about_')]
    key = st.rng.choice(keys)
    attr = key[len('about_'):]
    present = st.present(2, 3)
    speaker = st.speaker_of(present)
    target = st.rng.choice([p for p in st.people if p is not present[0]] or st.people)
    value, kw = target.attrs[attr]
    # the words name the person; memory writes that name
    f = fact(ATTR_FACT[attr].format(who=target.name, value=value), target.name, [kw])
    text = capital(st.render(key, st.rng.choice(st.tpl[key]), name=target.name, value=value))
    return Said('about', 'person', present, speaker, text, facts=[f],
                teach=[(('attr', target.face, attr), f, {'kw': kw})])


def tell_robot(st: Stream) -> Said | None:
    """An attribute told to the robot."""
    return state(st, addressed=True)


def intro(st: Stream) -> Said | None:
    """Someone introduces themself to the robot, sometimes with more in the same breath.

    The more is something to remember ("..., remember that the passport is on the windowsill") or something about
    themself ("I'm Ana. I work as a nurse."): that fact names the person by the name just given.
    """
    fresh = [p for p in st.people if not p.introduced]
    if not fresh:
        return None
    person = st.rng.choice(fresh)
    others = [p for p in st.people if p is not person]
    present = [person] + (st.rng.sample(others, 1) if others and st.rng.random() < 0.3 else [])
    tpl = st.rng.choice([t for t in st.tpl['intro'] if 'robot' in t.lower() or len(present) == 1])
    person.introduced = True
    learned = {person.face: person.name}
    text = st.render('intro', tpl, name=person.name)
    facts = [fact(f'{person.face} is called {person.name}.', person.face, [person.name])]
    teach = [(('name', person.face), facts[0], {'kw': person.name.lower()})]
    remembered = []
    more = st.rng.random() < st.cfg.multi_fact
    if more and st.rng.random() < 0.5:
        said, f, attr = st.attr_statement(person, learned)
        text = (text if text.endswith(('.', '!', '?')) else text + '.') + ' ' + capital(said)
        facts.append(f)
        teach.append((('attr', person.face, attr), f, {'kw': f['keywords'][0]}))
    elif more:
        clause, f, key, info = object_clause(st, person, learned)
        text = text.rstrip('.') + ', ' + st.render('remember', st.rng.choice(st.tpl['remember']), clause=clause)
        remembered, teach = [f], teach + [(key, f, info)]
    return Said('intro', 'robot', present, person, text, speech=1, response=f'Nice to meet you, {person.name}.',
                facts=facts, remembered=remembered, learn=learned, teach=teach)


def intro_other(st: Stream) -> Said | None:
    """Someone introduces another person in view to the robot."""
    fresh = [p for p in st.people if not p.introduced]
    if not fresh or len(st.people) < 2:
        return None
    other = st.rng.choice(fresh)
    speaker = st.rng.choice([p for p in st.people if p is not other])
    other.introduced = True
    text = st.render('intro_other', st.rng.choice(st.tpl['intro_other']), other=other.name)
    f = fact(f'{other.face} is called {other.name}.', other.face, [other.name])
    return Said('intro_other', 'robot', [speaker, other], speaker, text, speech=1,
                response=f'Nice to meet you, {other.name}.', facts=[f], learn={other.face: other.name},
                teach=[(('name', other.face), f, {'kw': other.name.lower()})])


def object_clause(st: Stream, speaker, learned: dict[str, str] | None = None,
                  owned: bool | None = None) -> tuple[str, dict, tuple, dict]:
    """(what is said, the remembered fact with names resolved, its key, its info) of where an object is."""
    obj, plural = st.object_noun()
    place, kw = st.rng.choice(st.vocab['places'])
    own = (st.rng.random() < 0.4) if owned is None else owned
    own = own and speaker is not None
    slots = be_it(plural)
    said = f'{"my" if own else "the"} {obj} {slots["be"]} {place}'
    owner = st.who(speaker, learned) if own else ''
    f = st.object_fact(obj, plural, place, kw, owner)
    key = ('object', speaker.face if own else '', obj)
    return said, f, key, {'kw': kw, 'plural': plural, 'place': place}


def object_state(st: Stream, move: bool = False) -> Said | None:
    """Someone says where they put something (not to the robot); ``move``: an object already known moves."""
    present = st.present()
    speaker = st.speaker_of(present)
    person = present[0]
    obj, plural = st.object_noun()
    own = speaker is not None and st.rng.random() < 0.5
    if move:
        known = [k for k in st.known if k[0] == 'object' and (k[1] == '' or k[1] == person.face)]
        if not known:
            return None
        _, owner_face, obj = st.rng.choice(known)
        plural = st.known[('object', owner_face, obj)]['plural']
        own = bool(owner_face) and speaker is not None
        if owner_face and not own:
            return None
    place, kw = st.rng.choice([p for p in st.vocab['places']])
    pool = [t for t, o in st.tpl['object_move' if move else 'object_state'] if (o == 'own') == own]
    if not pool:
        return None
    said_as = 'object_move' if move else 'object_state'
    text = capital(st.render(said_as, st.rng.choice(pool), owner='own' if own else 'the', obj=obj, place=place,
                             **be_it(plural)))
    f = st.object_fact(obj, plural, place, kw, st.who(person) if own else '')
    key = ('object', person.face if own else '', obj)
    return Said('object_move' if move else 'object_state', 'person', present, speaker, text, facts=[f],
                teach=[(key, f, {'kw': kw, 'plural': plural, 'place': place})])


def object_move(st: Stream) -> Said | None:
    """A known object has moved (a correction of where it is)."""
    return object_state(st, move=True)


def event_clause(st: Stream, new: bool = True) -> tuple[str, str, str, str, str]:
    """(event, kind, "on Friday", "Friday", previous bare value or '') for a new or a known event."""
    known = [k for k in st.known if k[0] == 'event']
    if not new and known:
        event = st.rng.choice(known)[1]
        kind = dict(st.vocab['events'])[event]
    else:
        event, kind = st.rng.choice(st.vocab['events'])
    old = st.known.get(('event', event), {}).get('kw', '')
    for _ in range(10):
        when, bare = st.value_phrase(kind)
        if bare.lower() != old:
            break
    return event, kind, when, bare, old


def remember(st: Stream, typed: bool = False) -> Said | None:
    """A "remember that ..." request (spoken with a wake word, or typed): the item is pinned in the user's words."""
    alone = st.rng.random() < 0.1 and not typed
    present = [] if alone else st.present(1, 2)
    speaker = present[0] if len(present) == 1 else st.speaker_of(present) if present else None
    if st.rng.random() < 0.65:
        clause, f, key, info = object_clause(st, speaker)
    else:
        event, _, when, bare, old = event_clause(st)
        clause = f'{event} is {when}'
        f = fact(capital(clause) + '.', '', [event.replace('the ', '', 1), bare])
        key, info = ('event', event), {'kw': bare.lower(), 'when': when}
    f['pinned'] = True
    if typed:
        text = st.render('typed_note', st.rng.choice(st.tpl['typed_note']), clause=clause)
        return Said('typed_note', 'robot', present, speaker, typed=text, speech=1, response=NOTED, remembered=[f],
                    teach=[(key, f, info)])
    text = addressed(st, present, st.render('remember', st.rng.choice(st.tpl['remember']), clause=clause))
    return Said('remember', 'robot', present, speaker, text, speech=1, response=NOTED, remembered=[f],
                teach=[(key, f, info)])


def addressed(st: Stream, present: list, request: str) -> str:
    """A request to the robot: behind a wake word, or without one from someone alone in view."""
    if len(present) == 1 and st.rng.random() < st.cfg.no_wake:
        return capital(request)
    return f'{st.wake()} {request}'


def typed_note(st: Stream) -> Said | None:
    """A typed "remember that ..." note."""
    return remember(st, typed=True)


def event(st: Stream, correction: bool = False) -> Said | None:
    """Someone says when an event is, to the others or to the robot; ``correction``: a known event changes."""
    if correction and not any(k[0] == 'event' for k in st.known):
        return None
    ev, kind, when, bare, old = event_clause(st, new=not correction)
    present = st.present()
    speaker = st.speaker_of(present)
    if correction:
        if not old:
            return None
        tpl = st.rng.choice(st.tpl['correction'])
        old_phrase = f'on {capital(old)}' if kind == 'day' else f'at {old}'
        text = st.render('correction', tpl, event=ev, when=when, when_bare=bare, old=old_phrase)
    else:
        text = st.render('event', st.rng.choice(st.tpl['event']), event=ev, when=when, when_bare=bare)
    f = fact(capital(f'{ev} is {when}.'), '', [ev.replace('the ', '', 1), bare])
    teach = [(('event', ev), f, {'kw': bare.lower(), 'when': when})]
    if st.rng.random() < 0.35:
        return Said('correction' if correction else 'event', 'robot', present, speaker,
                    f'{st.wake()} {text}', speech=1, response=NOTED if correction else ACK, facts=[f], teach=teach)
    return Said('correction' if correction else 'event', 'person', present, speaker, capital(text), facts=[f],
                teach=teach)


def correction(st: Stream) -> Said | None:
    """A known event moves ("actually, the meeting is on Friday")."""
    return event(st, correction=True)


def opinion(st: Stream) -> Said | None:
    """Two or more people chat; the speaker gives an opinion on a topic."""
    present = st.present(2, 3)
    speaker = st.speaker_of(present)
    topic = st.rng.choice(st.vocab['topics'])
    said, fact_tpl, kw = st.rng.choice(st.tpl['opinion'])
    text = st.render('opinion', said, kw, topic=topic)
    if st.rng.random() < 0.5:
        text = f'{present[1].name}, {text}'
    if speaker is None:
        return Said('opinion', 'person', present, None, capital(text))
    who = st.who(speaker)
    f = fact(capital(fact_tpl.format(who=who, topic=topic)), who, [topic.replace('the ', '', 1), kw])
    return Said('opinion', 'person', present, speaker, capital(text), facts=[f],
                teach=[(('opinion', speaker.face, topic), f, {'kw': kw, 'tpl': fact_tpl})])


def to_person(st: Stream) -> Said | None:
    """A question or request to another person in view (not for the robot)."""
    present = st.present(2, 3)
    text = st.rng.choice(st.tpl['to_person']).format(other=present[1].name)
    return Said('to_person', 'person', present, st.speaker_of(present), capital(text))


def self_talk(st: Stream) -> Said | None:
    """Someone alone talks to themself."""
    return Said('self_talk', 'person', st.present(1, 1), None, capital(st.rng.choice(st.tpl['self_talk'])))


def device(st: Stream) -> Said | None:
    """A radio or TV talks: nobody in view, or people in view and no speaker singled out ("someone said")."""
    line, kws, subject = st.rng.choice(st.vocab['broadcasts'])
    present = [] if st.rng.random() < 0.7 else st.present(2, 3)
    teach = [(('broadcast', subject), None, {'kw': kws[0], 'line': line, 'kws': list(kws)})] if subject else []
    return Said('device', 'device', present, None, line, teach=teach)


def remind(st: Stream) -> Said | None:
    """A "remind me to ... in N minutes" request."""
    present = [] if st.rng.random() < 0.1 else st.present(1, 2)
    speaker = present[0] if len(present) == 1 else st.speaker_of(present) if present else None
    task = st.rng.choice(st.vocab['tasks'])
    delay, secs = st.rng.choice(DELAYS)
    text = addressed(st, present, st.rng.choice(st.tpl['remind']).format(task=task, delay=delay))
    return Said('remind', 'robot', present, speaker, text, speech=1, response=f'Okay, I will remind you in {delay}.',
                reminders=[{'text': task, 'in_seconds': secs}])


def general(st: Stream) -> Said | None:
    """A general-knowledge question (no memory needed)."""
    trivia, answer = st.rng.choice(TRIVIA[st.split])
    present = st.present(1, 2)
    text = f'{st.wake()} ' + st.phrase('general').format(trivia=trivia)
    return Said('general', 'robot', present, st.speaker_of(present), text, speech=1, response=answer)


def chitchat(st: Stream) -> Said | None:
    """Small talk with the robot (no memory needed)."""
    chat, embedded, reply = st.rng.choice(CHITCHAT)
    present = st.present(1, 2)
    text = f'{st.wake()} ' + st.phrase('chitchat').format(chat=chat, chat_embedded=embedded)
    return Said('chitchat', 'robot', present, st.speaker_of(present), text, speech=1, response=reply)


EVENTS: dict[str, Callable[[Stream], Said | None]] = {
    'idle': idle, 'state': state, 'about': about, 'tell_robot': tell_robot, 'intro': intro,
    'intro_other': intro_other, 'object_state': object_state, 'object_move': object_move, 'remember': remember,
    'typed_note': typed_note, 'event': event, 'correction': correction, 'opinion': opinion, 'to_person': to_person,
    'self_talk': self_talk, 'device': device, 'remind': remind, 'general': general, 'chitchat': chitchat,
}

__all__ = ['EVENTS', 'idle', 'object_clause', 'event_clause', 'ACK', 'NOTED']
