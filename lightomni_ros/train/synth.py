# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Synthetic interaction streams for the reaction adapter and heads (paper appendix B, adapted to a robot).

A *stream* is a scripted long interaction: several people (``<face_N>`` ids, names, attributes) come and go, talk to
each other and to the robot, state facts, ask "remember that ..." and "remind me ..." requests, ask questions that
need long-term memory and questions that do not, and leave idle stretches. Every segment becomes one example with

- labels of the two triggers (``speech``: the robot should answer now; ``search``: memory must be searched),
- the ids of the memory entries that exist at that moment (what consolidation would have stored so far),
- the gold entry a retrieval should find (memory questions only),
- the global-state script S_g the reflex pass would read (the latest episodic events).

Noisy variants follow the paper's robustness test: unrelated text four times the length of the query prepended, and
ASR-style corruptions (dropped and misheard words, fillers, no punctuation). The same seed gives the same files; the
held-out split uses a different seed *and* a different set of phrasings and noise sentences (``TEMPLATES['heldout']``),
so its queries never repeat a training phrasing. The training split's questions also go through a label-neutral
lead-in grammar (:mod:`.phrasing`: plain, behind a lead-in, or embedded) and it adds small talk and more trivia, so
that no framing of a question goes with one label only.

Output: ``<out>/<split>/examples.jsonl`` (one segment per line), ``memories.jsonl`` (every entry of every stream)
``pairs_memory.jsonl`` / ``pairs_generation.jsonl`` ((input, target) pairs for next-token training of the memory and
generation adapters) and ``meta.json``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import pathlib
import random
from typing import Any, Iterable, Sequence

from . import phrasing

# -- people and the things they say -------------------------------------------------------------------------------
NAMES = ('Ana', 'Ben', 'Chloe', 'David', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas', 'Kemal', 'Lena',
         'Marco', 'Nadia', 'Oscar', 'Priya', 'Quentin', 'Rosa', 'Samir', 'Tanya', 'Umar', 'Vera', 'Wei', 'Yusuf',
         'Zoe', 'Aiko', 'Bruno', 'Carmen', 'Dmitri', 'Esther')

# attribute -> (values, memory content template)
ATTRIBUTES: dict[str, tuple[tuple[str, ...], str]] = {
    'drink': (('green tea', 'black coffee', 'hot chocolate', 'orange juice', 'sparkling water', 'chai latte',
               'peppermint tea', 'espresso'), '{name} ({face}) likes to drink {value}.'),
    'job': (('nurse', 'carpenter', 'software engineer', 'teacher', 'chef', 'pilot', 'librarian', 'electrician',
             'dentist', 'photographer'), '{name} ({face}) works as a {value}.'),
    'pet': (('a cat called Miso', 'a dog called Rufus', 'a parrot called Kiwi', 'a rabbit called Clover',
             'a tortoise called Sheldon', 'two goldfish called Bubbles and Squeak'), '{name} ({face}) has {value}.'),
    'city': (('Lisbon', 'Osaka', 'Nairobi', 'Toronto', 'Krakow', 'Valparaiso', 'Edinburgh', 'Hanoi', 'Porto',
              'Marseille'), '{name} ({face}) comes from {value}.'),
    'hobby': (('rock climbing', 'playing the cello', 'painting watercolours', 'growing tomatoes', 'chess',
               'baking sourdough', 'salsa dancing', 'birdwatching'), '{name} ({face}) enjoys {value}.'),
    'allergy': (('peanuts', 'shellfish', 'cat hair', 'pollen', 'penicillin', 'strawberries'),
                '{name} ({face}) is allergic to {value}.'),
    'birthday': (('January', 'March', 'May', 'July', 'September', 'November', 'February', 'October'),
                 '{name} ({face}) has a birthday in {value}.'),
}
OBJECTS = ('spare key', 'passport', 'umbrella', 'charger', 'reading glasses', 'wallet', 'tape measure',
           'first-aid kit', 'bike lock', 'remote control', 'library book', 'headphones')
PLACES = ('under the blue flowerpot', 'in the top drawer of the desk', 'behind the microwave', 'on the bookshelf',
          'in the red toolbox', 'in the glovebox of the car', 'under the sofa cushion', 'in the hallway cupboard',
          'next to the fruit bowl', 'in the garage on the left shelf')
TASKS = ('call the dentist', 'take the bread out of the oven', 'water the plants', 'check the laundry',
         'phone my sister', 'move the car', 'take my medicine', 'send the invoice', 'feed the cat',
         'turn off the sprinkler')
DELAYS = (('three minutes', 180), ('five minutes', 300), ('ten minutes', 600), ('one minute', 60),
          ('twenty minutes', 1200), ('half an hour', 1800))
TOPICS = ('the football match', 'the new bakery', 'the weather this weekend', 'the train strike', 'the garden fence',
          'the concert tickets', 'the broken dishwasher', 'the holiday in Spain', 'the neighbour\'s new dog',
          'the board game night')
SCENES = ('kitchen', 'living room', 'hallway', 'office', 'garden', 'dining table', 'workshop', 'sofa')
TRIVIA = ('what is the capital of Australia', 'how many legs does a spider have', 'what is seven times eight',
          'how far away is the moon', 'why is the sky blue', 'what is the boiling point of water',
          'who painted the Mona Lisa', 'how many days are in a leap year')
TRIVIA_ANSWERS = ('Canberra.', 'Eight.', 'Fifty-six.', 'About 384,000 kilometres.', 'Sunlight scatters off air.',
                  '100 degrees Celsius at sea level.', 'Leonardo da Vinci.', '366 days.')

# -- phrasings per split (the held-out split never sees a training phrasing) -------------------------------------
TEMPLATES: dict[str, dict[str, tuple[str, ...]]] = {
    'train': {
        # several phrasings per kind: with two, the heads learned the phrasings rather than the intent (held-out
        # search-trigger F1 0.81); questions are further varied by phrasing.choose. The held-out split below never
        # shares a phrasing with this list
        'wake': ('Robot,', 'Hey robot,', 'Robot, quick question:', 'Assistant,', 'Hi robot,', 'Listen robot,',
                 'Robot, sorry to bother you,', 'Hey there robot,', 'Hello robot,', 'Hi assistant,',
                 'Assistant, hello,', 'Robot, hey,', 'Yo robot,', 'Right robot,'),
        'intro': ('Hi robot, I am {name}.', 'Hello, my name is {name}, nice to meet you robot.',
                  'Robot, this is {name} speaking.', 'Hey robot, I\'m {name}, I live next door.',
                  'Nice to meet you robot, everyone calls me {name}.'),
        'state_drink': ('I always drink {value} in the morning.', 'nothing beats a cup of {value} for me.',
                        'I just made myself some {value}.'),
        'state_job': ('I work as a {value} at the hospital downtown.', 'being a {value} is exhausting some days.',
                      'my shift as a {value} starts at six.'),
        'state_pet': ('I have {value} at home.', 'my flat is quiet except for {value}.',
                      'I share my home with {value}.'),
        'state_city': ('I grew up in {value}.', 'back home in {value} it is much warmer.',
                       'I moved here from {value}.'),
        'state_hobby': ('on weekends I love {value}.', 'my favourite hobby is {value}.', 'I got really into {value}.'),
        'state_allergy': ('careful, I am allergic to {value}.', 'I cannot go near {value}, I am allergic.',
                          'the doctor says I must avoid {value}.'),
        'state_birthday': ('my birthday is in {value}.', 'I was born in {value}.',
                           'my party is in {value} every year.'),
        'ask_other_drink': ('what does {name} like to drink?', 'what drink should I get for {name}?',
                            'what should I make {name} to drink?', 'do you know {name}\'s favourite drink?',
                            'tell me what {name} usually drinks.'),
        'ask_other_job': ('what does {name} do for a living?', 'what is {name}\'s job?', 'what work does {name} do?',
                          'do you know what {name} works as?', 'tell me {name}\'s occupation.'),
        'ask_other_pet': ('what pet does {name} have?', 'does {name} have any animals?',
                          'what animal lives with {name}?',
                          'tell me about {name}\'s pet.'),
        'ask_other_city': ('where is {name} from?', 'which city did {name} grow up in?', 'where was {name} born?',
                           'do you know which town {name} is from?', 'what place does {name} call home?'),
        'ask_other_hobby': ('what does {name} do for fun?', 'what is {name}\'s hobby?', 'what is {name} into?',
                            'how does {name} relax?'),
        'ask_other_allergy': ('is {name} allergic to anything?', 'what is {name} allergic to?',
                              'what must {name} avoid eating?', 'tell me about {name}\'s allergy.'),
        'ask_other_birthday': ('when is {name}\'s birthday?', 'which month was {name} born in?',
                               'when does {name} celebrate a birthday?'),
        'ask_self_drink': ('what do I usually drink?', 'do you remember my favourite drink?',
                           'what did I say I drink?'),
        'ask_self_job': ('do you remember what my job is?', 'what did I tell you I do for work?',
                         'what is my occupation?'),
        'ask_self_allergy': ('what am I allergic to again?', 'which food must I avoid?'),
        'ask_self_city': ('where did I say I grew up?', 'which city am I from?', 'where was I born?'),
        'remember': ('remember that the {obj} is {place}.', 'please remember that I left the {obj} {place}.',
                     'don\'t forget, the {obj} is {place}.', 'make a note: I put the {obj} {place}.',
                     'for later: the {obj} is {place}.', 'I am putting the {obj} {place}, remember that.',
                     'store this, the {obj} is {place}.'),
        'ask_object': ('where is the {obj}?', 'where did I leave the {obj}?', 'have you seen where the {obj} went?',
                       'do you know where I put the {obj}?', 'tell me where the {obj} is.',
                       'I lost the {obj}, where was it?'),
        'remind': ('remind me to {task} in {delay}.', 'in {delay} remind me to {task}.',
                   'give me a reminder in {delay} to {task}.', 'could you remind me to {task} in {delay}?',
                   'before I forget, remind me to {task} in {delay}.', 'I need a reminder to {task} in {delay}.',
                   'ping me in {delay} to {task}.', 'in {delay}, tell me to {task}.'),
        'ask_topic': ('what did {name} say about {topic}?', 'what was {name} saying about {topic} earlier?',
                      'what did {name} think of {topic}?', 'did {name} mention {topic}, what was said?',
                      'tell me what {name} said on {topic}.'),
        'general': ('{trivia}?', 'can you tell me {trivia}?', 'quick quiz, {trivia}?', 'settle a bet: {trivia}?'),
        'chitchat': ('{chat}',),
        'chat_to_person': ('{other}, {line}', '{other}, pass me the salt please.', '{other}, are you coming later?',
                           '{line} What do you say, {other}?', '{other}, where did you park?'),
        'topic_line': ('I think {topic} was a total disaster.', 'honestly {topic} is all anyone talks about.',
                       'did you hear anything new about {topic}?', 'we should sort out {topic} before Friday.',
                       'I loved {topic}, it was great fun.', 'nobody told me about {topic} until today.'),
        'self_talk': ('hmm, where did I put that pen.', 'okay, that is enough for today.', 'ugh, this is heavy.',
                      'now what was I doing.', 'I need a coffee.'),
        'noise': ('The quarterly report shows revenue grew by four percent across all regions.',
                  'Turn left at the roundabout and continue for two kilometres.',
                  'The recipe calls for two cups of flour and a pinch of salt.',
                  'Scientists observed a new comet passing near Jupiter last spring.',
                  'The museum will be closed for renovations until the end of the month.',
                  'Our team meeting has been moved to Thursday afternoon.',
                  'The river flooded the lower fields after three days of rain.',
                  'Tickets for the festival sold out within ten minutes.'),
    },
    'heldout': {
        'wake': ('Excuse me robot,', 'Okay robot,', 'Robot, tell me,', 'Hey assistant,'),
        'intro': ('Good morning robot, call me {name}.', 'Robot, I\'m {name}, I just moved in.'),
        'state_drink': ('my usual order is {value}.', 'I could really use some {value} right now.'),
        'state_job': ('I have been a {value} for ten years.', 'as a {value} I start work very early.'),
        'state_pet': ('at home I look after {value}.',),
        'state_city': ('I was raised in {value}.', 'my family still lives in {value}.'),
        'state_hobby': ('I spend my free time {value}.',),
        'state_allergy': ('I react badly to {value}.', 'no {value} for me please, allergy.'),
        'state_birthday': ('I celebrate my birthday in {value}.',),
        'ask_other_drink': ('which drink does {name} prefer?', 'what would {name} want to drink?'),
        'ask_other_job': ('what is {name}\'s profession?', 'where does {name} work, what kind of job?'),
        'ask_other_pet': ('which animal does {name} keep at home?',),
        'ask_other_city': ('what is {name}\'s hometown?', 'where does {name} come from originally?'),
        'ask_other_hobby': ('how does {name} like to spend weekends?',),
        'ask_other_allergy': ('does {name} have any allergies?',),
        'ask_other_birthday': ('in which month is {name}\'s birthday?',),
        'ask_self_drink': ('which drink do I like?',),
        'ask_self_job': ('remind me what I do for work?',),
        'ask_self_allergy': ('do I have any allergies?',),
        'ask_self_city': ('what is my hometown?',),
        'remember': ('keep in mind that the {obj} is {place}.', 'note that the {obj} is now {place}.'),
        'ask_object': ('can you tell me where the {obj} is?', 'any idea where the {obj} ended up?'),
        'remind': ('please remind me in {delay} to {task}.', 'set a reminder to {task} in {delay}.'),
        'ask_topic': ('what was {name}\'s opinion on {topic}?',),
        'general': ('do you know {trivia}?', 'I wonder, {trivia}?'),
        'chat_to_person': ('{line} Don\'t you think, {other}?', '{other}, could you close the window?'),
        'topic_line': ('everyone at work keeps complaining about {topic}.', 'I am so tired of hearing about {topic}.',
                       'my brother told me a funny story about {topic}.'),
        'self_talk': ('right, where is my phone.', 'what a long day it has been.'),
        'noise': ('The stock market closed slightly lower on Tuesday after a volatile session.',
                  'Bake the vegetables at two hundred degrees for forty minutes.',
                  'The hiking trail climbs steeply through pine forest to the summit.',
                  'A new library branch opens next week near the central station.',
                  'Engineers replaced the old bridge cables during the summer.',
                  'The orchestra rehearses every Wednesday evening in the town hall.'),
    },
}
ASR_CONFUSIONS = {'where': 'wear', 'there': 'their', 'to': 'two', 'for': 'four', 'know': 'no', 'right': 'write',
                  'robot': 'row bot', 'tea': 'tee', 'here': 'hear', 'what': 'watt', 'the': 'a', 'is': 'his',
                  'my': 'mine', 'did': 'did', 'remind': 'remained', 'allergic': 'a lurgic', 'drink': 'drank'}
FILLERS = ('uh', 'um', 'erm', 'you know', 'like')
SPLIT_SEEDS = {'train': 0, 'heldout': 1000}
NOISE_KINDS = ('prefix', 'asr')
HELDOUT_NOISE = ('prefix', 'asr', 'prefix+asr')


@dataclasses.dataclass
class SynthConfig:
    """How much to generate."""

    streams: int = 24
    segments: int = 44             # segments per stream (the stream stops earlier when it runs out of material)
    people: tuple[int, int] = (3, 5)
    noisy_fraction: float = 1.0    # fraction of memory questions that also get each noisy variant
    noisy_other: float = 0.15      # fraction of other addressed utterances that get a noisy variant
    sg_events: int = 2             # episodic events in the S_g script of each example
    # noisy variants made of each chosen example (both corruptions at once too: the held-out split has them)
    noise_kinds: tuple[str, ...] = ('prefix', 'asr', 'prefix+asr')


@dataclasses.dataclass
class Person:
    """One person of a stream."""

    face: str
    name: str
    attrs: dict[str, str]
    introduced: bool = False


class Stream:
    """Builds one stream: memory entries, examples and (input, target) pairs, in time order."""

    def __init__(self, split: str, index: int, rng: random.Random, cfg: SynthConfig) -> None:
        self.split, self.index, self.rng, self.cfg = split, index, rng, cfg
        self.tpl = TEMPLATES[split]
        self.t = 0.0
        n = rng.randint(*cfg.people)
        names = rng.sample(NAMES, n)
        self.people = [Person(f'<face_{i + 1}>', nm, {a: rng.choice(v[0]) for a, v in ATTRIBUTES.items()})
                       for i, nm in enumerate(names)]
        self.memories: list[dict[str, Any]] = []
        self.examples: list[dict[str, Any]] = []
        self.pairs: dict[str, list[dict[str, str]]] = {'memory': [], 'generation': []}
        self.facts: dict[tuple, int] = {}      # (kind, key...) -> memory index of the latest entry
        self.episodes: list[int] = []
        self.objects: dict[str, str] = {}

    # -- helpers ----------------------------------------------------------------------------------------------------
    def _add_memory(self, kind: str, text: str, faces: list[str], start: float, end: float) -> int:
        mid = len(self.memories)
        self.memories.append({'id': f'{self.split}/{self.index}/{mid}', 'stream': self.index, 'kind': kind,
                              'text': text, 'start': round(start, 1), 'end': round(end, 1), 'face_ids': faces})
        if kind == 'episodic':
            self.episodes.append(mid)
        return mid

    def _wake(self) -> str:
        return self.rng.choice(self.tpl['wake'])

    def _phrase(self, key: str) -> str:
        """A question template: the training split goes through the lead-in grammar, the held-out split does not."""
        if self.split == 'train':
            return phrasing.choose(self.rng, self.tpl[key], key, forbidden=TEMPLATES['heldout'].get(key, ()))
        return self.rng.choice(self.tpl[key])

    def _sg(self) -> str:
        lines = [f'[{self.memories[i]["start"]:.0f}s] {self.memories[i]["text"]}'
                 for i in self.episodes[-self.cfg.sg_events:]]
        return '\n'.join(lines)

    def _example(self, kind: str, speaker: Person | None, present: list[Person], transcript: str, speech: int,
                 search: int, gold: int | None = None, response: str = '', facts: Iterable[str] = (),
                 remembered: Iterable[str] = (), reminder: dict[str, Any] | None = None) -> None:
        """Record a segment, then what consolidation would store from it."""
        dur = 2.0 + len(transcript.split()) * 0.35 if transcript else 30.0
        start, end = self.t, self.t + dur
        faces = [p.face for p in present]
        scene = self.rng.choice(SCENES)
        n_mem = len(self.memories)  # entries existing while this segment is decided
        ex = {'stream': self.index, 'seq': len(self.examples), 'kind': kind, 'start': round(start, 1),
              'end': round(end, 1), 'face_ids': faces, 'speaker': speaker.face if speaker else '',
              'visual_tags': [scene], 'transcript': transcript, 'query': transcript, 'noise': '',
              'speech': speech, 'search': search, 'gold': self.memories[gold]['id'] if gold is not None else None,
              'gold_text': self.memories[gold]['text'] if gold is not None else '',
              'memory_ids': [m['id'] for m in self.memories[:n_mem]], 'sg': self._sg(), 'response': response}
        self.examples.append(ex)
        if speech and response:
            self.pairs['generation'].append({'kind': kind, 'sg': ex['sg'], 'transcript': transcript,
                                             'face_ids': faces, 'visual_tags': [scene],
                                             'memories': [ex['gold_text']] if gold is not None else [],
                                             'target': response})
        # consolidation: facts, remembered items and the episodic event of this segment
        who = speaker.face if speaker else (faces[0] if faces else '')
        for fact in list(facts) + list(remembered):
            self._add_memory('semantic', fact, [who] if who else [], start, end)
        if transcript:
            said = f'heard {who} say "{transcript}"'
            epi = f'saw {", ".join(faces) or "nobody"} in the {scene}; {said}'
            if response:
                epi += f'; answered "{response}"'
        else:
            epi = f'saw {", ".join(faces) or "nobody"} in the {scene}; nobody spoke'
        eidx = self._add_memory('episodic', epi, faces, start, end)
        if kind == 'chat':
            ex['episode'] = self.memories[eidx]['id']
        if transcript:
            self.pairs['memory'].append({
                'kind': kind, 'sg': ex['sg'], 'transcript': transcript, 'face_ids': faces, 'visual_tags': [scene],
                'response': response,
                'target': json.dumps({'visual': f'{", ".join(faces)} in the {scene}', 'audio': transcript,
                                      'semantic': list(facts), 'remembered': list(remembered),
                                      'reminders': [reminder] if reminder else []})})
        self.t = end + self.rng.uniform(3.0, 40.0)

    # -- events -----------------------------------------------------------------------------------------------------
    def step(self) -> None:
        """Add one segment of a randomly chosen kind (weights favour what a robot mostly hears)."""
        rng = self.rng
        present = rng.sample(self.people, rng.randint(1, min(3, len(self.people))))
        speaker = present[0]
        kinds = ['idle', 'chat', 'self_talk', 'state', 'intro', 'remember', 'remind', 'general',
                 'ask_other', 'ask_self', 'ask_object', 'ask_topic']
        weights = [3, 4, 1, 4, 2, 2, 2, 2, 4, 2, 2, 2]
        if 'chitchat' in self.tpl:       # small talk and commands that need no memory (training split only)
            kinds.append('chitchat')
            weights.append(2)
        kind = rng.choices(kinds, weights)[0]
        if kind == 'idle':
            self._example('idle', None, present if rng.random() < 0.5 else [], '', 0, 0)
        elif kind == 'chat':
            if len(present) < 2:
                present = present + [p for p in self.people if p is not speaker][:1]
            other = present[1]
            topic = rng.choice(TOPICS)
            line = rng.choice(self.tpl['topic_line']).format(topic=topic)
            text = rng.choice(self.tpl['chat_to_person']).format(other=other.name, line=line)
            self._example('chat', speaker, present, text, 0, 0)
            if topic in text:
                self.facts[('topic', speaker.face, topic)] = self.episodes[-1]
        elif kind == 'self_talk':
            self._example('self_talk', speaker, present, rng.choice(self.tpl['self_talk']), 0, 0)
        elif kind == 'intro':
            person = rng.choice([p for p in self.people if not p.introduced] or self.people)
            person.introduced = True
            text = rng.choice(self.tpl['intro']).format(name=person.name)
            self._example('intro', person, [person] + [p for p in present if p is not person][:1], text, 1, 0,
                          response=f'Nice to meet you, {person.name}!',
                          facts=[f'{person.face} is called {person.name}.'])
        elif kind == 'state':
            attr = rng.choice(list(ATTRIBUTES))
            value = speaker.attrs[attr]
            text = rng.choice(self.tpl[f'state_{attr}']).format(value=value)
            fact = ATTRIBUTES[attr][1].format(name=speaker.name, face=speaker.face, value=value)
            self._example('state', speaker, present, text, 0, 0, facts=[fact])
            self.facts[('attr', speaker.face, attr)] = len(self.memories) - 2
        elif kind == 'remember':
            obj, place = rng.choice(OBJECTS), rng.choice(PLACES)
            text = f'{self._wake()} ' + rng.choice(self.tpl['remember']).format(obj=obj, place=place)
            fact = f'The {obj} is {place} (told by {speaker.name}).'
            self._example('remember', speaker, present, text, 1, 0, response='Okay, I will remember that.',
                          remembered=[fact])
            self.facts[('object', obj)] = len(self.memories) - 2
        elif kind == 'remind':
            task = rng.choice(TASKS)
            delay, secs = rng.choice(DELAYS)
            text = f'{self._wake()} ' + rng.choice(self.tpl['remind']).format(task=task, delay=delay)
            self._example('remind', speaker, present, text, 1, 0, response=f'Sure, I will remind you in {delay}.',
                          facts=[f'Reminder for {speaker.name} ({speaker.face}): {task}, due in {delay}.'],
                          reminder={'text': task, 'in_seconds': secs})
        elif kind == 'general':
            pool = list(zip(TRIVIA, TRIVIA_ANSWERS)) + (list(phrasing.TRIVIA_TRAIN) if self.split == 'train' else [])
            trivia, answer = pool[rng.randrange(len(pool))]
            text = f'{self._wake()} ' + self._phrase('general').format(trivia=trivia)
            self._example('general', speaker, present, text, 1, 0, response=answer)
        elif kind == 'chitchat':
            chat, chat_embedded, reply = rng.choice(phrasing.CHITCHAT)
            text = f'{self._wake()} ' + self._phrase('chitchat').format(chat=chat, chat_embedded=chat_embedded)
            self._example('chitchat', speaker, present, text, 1, 0, response=reply)
        elif kind == 'ask_other':
            known = [k for k in self.facts if k[0] == 'attr' and k[1] != speaker.face]
            if not known:
                return self._example('idle', None, present, '', 0, 0)
            _, face, attr = rng.choice(known)
            person = next(p for p in self.people if p.face == face)
            text = f'{self._wake()} ' + self._phrase(f'ask_other_{attr}').format(name=person.name)
            gold = self.facts[('attr', face, attr)]
            self._example('ask_other', speaker, present, text, 1, 1, gold=gold,
                          response=self.memories[gold]['text'].replace(f' ({face})', ''))
        elif kind == 'ask_self':
            known = [k for k in self.facts if k[0] == 'attr' and f'ask_self_{k[2]}' in self.tpl]
            if not known:
                return self._example('idle', None, present, '', 0, 0)
            _, face, attr = rng.choice(known)
            person = next(p for p in self.people if p.face == face)
            text = f'{self._wake()} ' + self._phrase(f'ask_self_{attr}')
            gold = self.facts[('attr', face, attr)]
            # asked alone in front of the robot: only the face id says who "I" is
            self._example('ask_self', person, [person], text, 1, 1, gold=gold,
                          response=self.memories[gold]['text'].replace(f'{person.name} ({face})', 'You'))
        elif kind == 'ask_object':
            known = [k for k in self.facts if k[0] == 'object']
            if not known:
                return self._example('idle', None, present, '', 0, 0)
            key = rng.choice(known)
            text = f'{self._wake()} ' + self._phrase('ask_object').format(obj=key[1])
            gold = self.facts[key]
            self._example('ask_object', speaker, present, text, 1, 1, gold=gold,
                          response=self.memories[gold]['text'].split(' (told')[0] + '.')
        elif kind == 'ask_topic':
            known = [k for k in self.facts if k[0] == 'topic' and k[1] != speaker.face]
            if not known:
                return self._example('idle', None, present, '', 0, 0)
            _, face, topic = rng.choice(known)
            person = next(p for p in self.people if p.face == face)
            text = f'{self._wake()} ' + self._phrase('ask_topic').format(name=person.name, topic=topic)
            gold = self.facts[('topic', face, topic)]
            self._example('ask_topic', speaker, present, text, 1, 1, gold=gold,
                          response=f'{person.name} talked about {topic} earlier.')
        return None


# -- noise ------------------------------------------------------------------------------------------------------
def prefix_noise(query: str, noise_pool: tuple[str, ...], rng: random.Random, factor: int = 4) -> str:
    """Unrelated text of ``factor`` times the query's word count, prepended to the query (paper robustness test)."""
    want = factor * len(query.split())
    words: list[str] = []
    while len(words) < want:
        words += rng.choice(noise_pool).split()
    return ' '.join(words[:want]) + ' ' + query


def asr_corrupt(text: str, rng: random.Random, rate: float = 0.2) -> str:
    """ASR-style errors: lowercase without punctuation, misheard words, dropped words, fillers, split characters."""
    out = []
    for w in text.lower().replace(',', ' ').replace('?', ' ').replace('.', ' ').split():
        r = rng.random()
        if w in ASR_CONFUSIONS and r < 0.6:
            out.append(ASR_CONFUSIONS[w])
        elif r < rate * 0.4:
            continue                                   # dropped
        elif r < rate * 0.7 and len(w) > 3:
            i = rng.randrange(1, len(w) - 1)
            out.append(w[:i] + w[i + 1:])              # a clipped phoneme
        else:
            out.append(w)
        if rng.random() < rate * 0.3:
            out.append(rng.choice(FILLERS))
    return ' '.join(out) or text.lower()


def noisy_variants(ex: dict[str, Any], noise_pool: tuple[str, ...], rng: random.Random,
                   kinds: Sequence[str] = NOISE_KINDS) -> list[dict[str, Any]]:
    """Noisy copies of an example (labels and gold unchanged): 'prefix', 'asr' or both ('prefix+asr')."""
    out = []
    for kind in kinds:
        if kind not in NOISE_KINDS + ('prefix+asr',):
            raise ValueError(f'unknown noise kind {kind!r}')
        v = dict(ex)
        v['noise'] = kind
        text = asr_corrupt(ex['query'], rng) if 'asr' in kind else ex['query']
        v['transcript'] = prefix_noise(text, noise_pool, rng) if 'prefix' in kind else text
        out.append(v)
    return out


# -- the whole split ----------------------------------------------------------------------------------------------
def generate(split: str, seed: int | None = None, cfg: SynthConfig | None = None) -> dict[str, Any]:
    """Examples, memories and pairs of one split (``train`` or ``heldout``), deterministic given the seed."""
    if split not in TEMPLATES:
        raise ValueError(f'unknown split {split!r}; use one of {sorted(TEMPLATES)}')
    cfg = cfg or SynthConfig()
    seed = SPLIT_SEEDS[split] if seed is None else seed
    rng = random.Random(f'{split}:{seed}')
    examples, memories = [], []
    pairs: dict[str, list] = {'memory': [], 'generation': []}
    for s in range(cfg.streams):
        st = Stream(split, s, random.Random(f'{split}:{seed}:{s}'), cfg)
        for _ in range(cfg.segments):
            st.step()
        memories += st.memories
        pairs['memory'] += st.pairs['memory']
        pairs['generation'] += st.pairs['generation']
        for ex in st.examples:
            examples.append(ex)
            memq = ex['gold'] is not None
            addressed = ex['speech'] == 1
            if (memq and rng.random() < cfg.noisy_fraction) or \
                    (addressed and not memq and rng.random() < cfg.noisy_other):
                examples += noisy_variants(ex, TEMPLATES[split]['noise'], rng, cfg.noise_kinds)
    for i, ex in enumerate(examples):
        ex['id'] = f'{split}/{i}'
    return {'split': split, 'seed': seed, 'config': dataclasses.asdict(cfg), 'examples': examples,
            'memories': memories, 'pairs': pairs}


def write(data: dict[str, Any], out_dir: str | pathlib.Path) -> pathlib.Path:
    """Write one split as JSONL files under ``out_dir/<split>/``; return that folder."""
    folder = pathlib.Path(out_dir) / data['split']
    folder.mkdir(parents=True, exist_ok=True)
    files = {'examples.jsonl': data['examples'], 'memories.jsonl': data['memories'],
             'pairs_memory.jsonl': data['pairs']['memory'], 'pairs_generation.jsonl': data['pairs']['generation']}
    digest = hashlib.sha256()
    for name, rows in files.items():
        text = ''.join(json.dumps(r, sort_keys=True) + '\n' for r in rows)
        digest.update(text.encode())
        (folder / name).write_text(text)
    ex = data['examples']
    meta = {'split': data['split'], 'seed': data['seed'], 'config': data['config'], 'examples': len(ex),
            'memories': len(data['memories']), 'speech': sum(e['speech'] for e in ex),
            'search': sum(e['search'] for e in ex), 'noisy': sum(1 for e in ex if e['noise']),
            'sha256': digest.hexdigest(), 'generator': generator_digest()}
    (folder / 'meta.json').write_text(json.dumps(meta, indent=1, sort_keys=True) + '\n')
    return folder


def generator_digest() -> str:
    """Digest of this module's and the phrasing grammar's source: a split written by other code is regenerated."""
    digest = hashlib.sha256(pathlib.Path(__file__).read_bytes())
    digest.update(pathlib.Path(phrasing.__file__).read_bytes())
    return digest.hexdigest()[:16]


def read_jsonl(path: str | pathlib.Path) -> list[dict[str, Any]]:
    """Rows of a JSONL file."""
    return [json.loads(line) for line in pathlib.Path(path).read_text().splitlines() if line.strip()]


def load_split(folder: str | pathlib.Path) -> dict[str, Any]:
    """Read a split written by :func:`write`."""
    folder = pathlib.Path(folder)
    return {'examples': read_jsonl(folder / 'examples.jsonl'), 'memories': read_jsonl(folder / 'memories.jsonl'),
            'pairs': {k: read_jsonl(folder / f'pairs_{k}.jsonl') for k in ('memory', 'generation')},
            'meta': json.loads((folder / 'meta.json').read_text())}


def ensure_splits(out_dir: str | pathlib.Path, train: SynthConfig | None = None,
                  heldout: SynthConfig | None = None, seed: int | None = None) -> dict[str, pathlib.Path]:
    """Generate both splits (train with ``seed``, held-out with its own seed) unless already there."""
    out = {}
    for split, cfg in (('train', train), ('heldout', heldout or SynthConfig(streams=9, noise_kinds=HELDOUT_NOISE))):
        folder = pathlib.Path(out_dir) / split
        s = SPLIT_SEEDS[split] if seed is None or split == 'heldout' else seed
        want = dataclasses.asdict(cfg or SynthConfig())
        if (folder / 'meta.json').is_file():
            meta = json.loads((folder / 'meta.json').read_text())
            if meta.get('seed') == s and meta.get('config') == json.loads(json.dumps(want)) \
                    and meta.get('generator') == generator_digest():
                out[split] = folder
                continue
        out[split] = write(generate(split, s, cfg), out_dir)
    return out


__all__ = ['SynthConfig', 'TEMPLATES', 'generate', 'write', 'load_split', 'ensure_splits', 'prefix_noise',
           'asr_corrupt', 'read_jsonl']
