# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""What the simulated streams talk about: people, their attributes, objects and places, events, topics, broadcasts.

Every fact has one canonical sentence (what the memory adapter writes, :data:`ATTR_FACT` etc.), the robot's answer
about it and the keywords that score both. Names, objects, places, events, topics and broadcasts come per split:
the held-out split has its own (:data:`VOCAB`), so a held-out figure is about people and things never trained on.
"""

from __future__ import annotations

from typing import Any

#: attribute -> canonical fact (memory), the robot's answer to the person themself, and the question's subject
ATTR_FACT = {'drink': '{who} likes to drink {value}.', 'job': '{who} works as {value}.', 'pet': '{who} has {value}.',
             'city': '{who} comes from {value}.', 'hobby': '{who} enjoys {value}.',
             'allergy': '{who} is allergic to {value}.', 'birthday': '{who} has a birthday in {value}.',
             'sport': '{who} plays {value}.'}
ATTR_YOU = {'drink': 'You like to drink {value}.', 'job': 'You work as {value}.', 'pet': 'You have {value}.',
            'city': 'You come from {value}.', 'hobby': 'You enjoy {value}.', 'allergy': 'You are allergic to {value}.',
            'birthday': 'Your birthday is in {value}.', 'sport': 'You play {value}.'}

# attribute -> (value, keyword that must appear in a fact or answer about it)
ATTR_VALUES: dict[str, tuple[tuple[str, str], ...]] = {
    'drink': (('green tea', 'green tea'), ('black coffee', 'black coffee'), ('hot chocolate', 'hot chocolate'),
              ('orange juice', 'orange juice'), ('sparkling water', 'sparkling water'), ('chai latte', 'chai'),
              ('peppermint tea', 'peppermint'), ('espresso', 'espresso'), ('lemonade', 'lemonade'),
              ('oat milk', 'oat milk')),
    'job': (('a nurse', 'nurse'), ('a carpenter', 'carpenter'), ('a software engineer', 'software engineer'),
            ('a teacher', 'teacher'), ('a chef', 'chef'), ('a pilot', 'pilot'), ('a librarian', 'librarian'),
            ('an electrician', 'electrician'), ('a dentist', 'dentist'), ('a photographer', 'photographer'),
            ('a plumber', 'plumber'), ('an architect', 'architect')),
    'pet': (('a cat called Miso', 'miso'), ('a dog called Rufus', 'rufus'), ('a parrot called Kiwi', 'kiwi'),
            ('a rabbit called Clover', 'clover'), ('a tortoise called Sheldon', 'sheldon'),
            ('a hamster called Peanut', 'peanut'), ('a dog called Pepper', 'pepper'), ('a cat called Luna', 'luna')),
    'city': (('Lisbon', 'lisbon'), ('Osaka', 'osaka'), ('Nairobi', 'nairobi'), ('Toronto', 'toronto'),
             ('Krakow', 'krakow'), ('Valparaiso', 'valparaiso'), ('Edinburgh', 'edinburgh'), ('Hanoi', 'hanoi'),
             ('Porto', 'porto'), ('Marseille', 'marseille'), ('Dublin', 'dublin'), ('Bogota', 'bogota')),
    'hobby': (('rock climbing', 'climbing'), ('playing the cello', 'cello'), ('painting watercolours', 'watercolour'),
              ('growing tomatoes', 'tomatoes'), ('chess', 'chess'), ('baking sourdough', 'sourdough'),
              ('salsa dancing', 'salsa'), ('birdwatching', 'birdwatching'), ('knitting', 'knitting'),
              ('fishing', 'fishing')),
    'allergy': (('peanuts', 'peanuts'), ('shellfish', 'shellfish'), ('cat hair', 'cat hair'), ('pollen', 'pollen'),
                ('penicillin', 'penicillin'), ('strawberries', 'strawberries'), ('gluten', 'gluten'),
                ('bee stings', 'bee stings')),
    'birthday': (('January', 'january'), ('March', 'march'), ('May', 'may'), ('July', 'july'),
                 ('September', 'september'), ('November', 'november'), ('February', 'february'),
                 ('October', 'october'), ('June', 'june'), ('December', 'december')),
    'sport': (('basketball', 'basketball'), ('tennis', 'tennis'), ('football', 'football'),
              ('volleyball', 'volleyball'), ('badminton', 'badminton'), ('table tennis', 'table tennis'),
              ('golf', 'golf'), ('water polo', 'water polo')),
}

DAYS = ('Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday')
TIMES = ('at nine', 'at ten', 'at eleven', 'at noon', 'at two', 'at three', 'at four', 'at five', 'at half past six',
         'at seven')
DELAYS = (('three minutes', 180), ('five minutes', 300), ('ten minutes', 600), ('one minute', 60),
          ('twenty minutes', 1200), ('half an hour', 1800), ('two minutes', 120), ('fifteen minutes', 900))

# Per split: names, objects (name, plural), places (phrase, keyword), events (phrase, 'day' or 'time'), topics,
# tasks to be reminded of, what a radio or TV is called when asked about, broadcasts (line, keywords, subject a
# question names; '' when nobody would ask), scenes and trivia / small talk with their replies.
VOCAB: dict[str, dict[str, Any]] = {
    'train': {
        'names': ('Ana', 'Ben', 'Chloe', 'David', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas', 'Kemal', 'Lena',
                  'Marco', 'Nadia', 'Oscar', 'Priya', 'Quentin', 'Rosa', 'Samir', 'Tanya', 'Umar', 'Vera', 'Wei',
                  'Yusuf', 'Zoe', 'Aiko', 'Bruno', 'Carmen', 'Dmitri', 'Esther', 'Felix', 'Gloria', 'Hamid', 'Ivy'),
        'objects': (('spare key', False), ('passport', False), ('umbrella', False), ('charger', False),
                    ('reading glasses', True), ('wallet', False), ('tape measure', False), ('first-aid kit', False),
                    ('bike lock', False), ('remote control', False), ('library book', False), ('headphones', True),
                    ('car keys', True), ('sunglasses', True), ('phone', False), ('scissors', True)),
        'places': (('under the blue flowerpot', 'flowerpot'), ('in the top drawer of the desk', 'top drawer'),
                   ('behind the microwave', 'microwave'), ('on the bookshelf', 'bookshelf'),
                   ('in the red toolbox', 'red toolbox'), ('in the glovebox of the car', 'glovebox'),
                   ('under the sofa cushion', 'sofa cushion'), ('in the hallway cupboard', 'hallway cupboard'),
                   ('next to the fruit bowl', 'fruit bowl'), ('in the garage on the left shelf', 'garage'),
                   ('in the blue drawer', 'blue drawer'), ('on the kitchen windowsill', 'windowsill')),
        'events': (('the team meeting', 'day'), ('the dentist appointment', 'day'), ('dinner', 'time'),
                   ('the book club', 'day'), ('the parcel delivery', 'day'), ('the yoga class', 'time'),
                   ('the parents evening', 'day'), ('the football training', 'time'), ('the plumber visit', 'day'),
                   ('the piano lesson', 'time')),
        'topics': ('the football match', 'the new bakery', 'the weather this weekend', 'the train strike',
                   'the garden fence', 'the concert tickets', 'the broken dishwasher', 'the holiday in Spain',
                   "the neighbour's new dog", 'the board game night', 'the new phone', 'the school play'),
        'tasks': ('call the dentist', 'take the bread out of the oven', 'water the plants', 'check the laundry',
                  'phone my sister', 'move the car', 'take my medicine', 'send the invoice', 'feed the cat',
                  'turn off the sprinkler'),
        # how someone asks what a radio or TV said
        'devices': ('the radio', 'the TV', 'the news', 'the guy on the radio', 'the woman on TV', 'the presenter'),
        'broadcasts': (
            ('The bridge on Main Street will be closed until Monday.', ('bridge', 'monday'), 'the bridge'),
            ('Heavy rain is expected tomorrow afternoon across the region.', ('rain', 'tomorrow'), 'the weather'),
            ('The city marathon starts at eight on Sunday morning.', ('marathon', 'sunday'), 'the marathon'),
            ('Fresh strawberries are half price at Green Market this week.', ('strawberries', 'half price'),
             'strawberries'),
            ('The national museum opens a dinosaur exhibition next month.', ('dinosaur', 'museum'), 'the museum'),
            ('Train services to the airport are delayed by forty minutes.', ('airport', 'forty minutes'),
             'the trains'),
            ('Tickets for the jazz festival go on sale on Friday.', ('jazz', 'friday'), 'the jazz festival'),
            ('The local library will stay open until nine during exams.', ('library', 'nine'), 'the library'),
            ('Where were you on the night of the fire, Mr. Hale?', (), ''),
            ('Detective, you need to come and see this right now.', (), ''),
            ('And the crowd goes wild as the ball hits the back of the net!', (), ''),
            ('Stay tuned, after the break we talk to the mayor.', (), ''),
            ('Do you want to know the secret of perfect skin? Call now.', (), ''),
            ('I told you never to call me at this number again.', (), ''),
        ),
        'scenes': ('kitchen', 'living room', 'hallway', 'office', 'garden', 'dining table', 'workshop', 'sofa',
                   'coffee mug', 'television', 'bookcase', 'desk', 'window shade', 'refrigerator'),
    },
    'heldout': {
        'names': ('Giulia', 'Mateo', 'Sofia', 'Kwame', 'Leila', 'Tomasz', 'Ingrid', 'Rahul', 'Noor', 'Pablo',
                  'Astrid', 'Jamal', 'Mei', 'Olek', 'Freya', 'Tariq'),
        'objects': (('house keys', True), ('notebook', False), ('torch', False), ('camera', False),
                    ('gloves', True), ('laptop', False), ('thermos', False), ('earrings', True)),
        'places': (('in the green basket', 'green basket'), ('under the bed', 'under the bed'),
                   ('on top of the fridge', 'fridge'), ('in the coat pocket', 'coat pocket'),
                   ('in the bathroom cabinet', 'bathroom cabinet'), ('behind the front door', 'front door')),
        'events': (('the school trip', 'day'), ('the vet appointment', 'day'), ('lunch', 'time'),
                   ('the choir practice', 'time'), ('the budget review', 'day')),
        'topics': ('the new cafe', 'the election', 'the power cut', 'the birthday party', 'the cycling race',
                   'the roof repair'),
        'tasks': ('check the oven', 'call the bank', 'take the washing in', 'pick up the kids', 'book the taxi'),
        'devices': ('the television', 'the announcer', 'the lady on the news', 'the voice on the radio'),
        'broadcasts': (
            ('The ferry to the island is cancelled because of strong winds.', ('ferry', 'cancelled'), 'the ferry'),
            ('The swimming pool reopens on Thursday after repairs.', ('pool', 'thursday'), 'the swimming pool'),
            ('Petrol prices will rise by ten cents next week.', ('petrol', 'ten cents'), 'petrol prices'),
            ('Snow is forecast for the mountains on Saturday night.', ('snow', 'saturday'), 'the snow'),
            ('Why did you lie to me about the money, Clara?', (), ''),
            ('Goal! What a finish in the final minute of the game!', (), ''),
            ('Order today and get a second blender completely free.', (), ''),
        ),
        'scenes': ('kitchen', 'living room', 'bedroom', 'balcony', 'studio couch', 'dining table', 'laptop',
                   'plant pot'),
    },
}

#: trivia (question, answer) per split: robot questions that need no memory
TRIVIA = {
    'train': (('what is the largest ocean', 'The Pacific.'), ('how many continents are there', 'Seven.'),
              ('what is the chemical symbol for gold', 'Au.'), ('who wrote Romeo and Juliet', 'William Shakespeare.'),
              ('how many minutes are in an hour', 'Sixty.'), ('what is the tallest mountain', 'Mount Everest.'),
              ('what language is spoken in Brazil', 'Portuguese.'), ('how many sides does a hexagon have', 'Six.'),
              ('what planet is closest to the sun', 'Mercury.'),
              ('what is the freezing point of water', 'Zero degrees.'),
              ('who discovered penicillin', 'Alexander Fleming.'), ('what is the capital of Canada', 'Ottawa.'),
              ('how many legs does a spider have', 'Eight.'), ('what is seven times eight', 'Fifty-six.'),
              ('what gas do plants breathe in', 'Carbon dioxide.'), ('how many bones are in the human body', '206.')),
    'heldout': (('what is the capital of Australia', 'Canberra.'), ('how far away is the moon', 'About 384,000 km.'),
                ('who painted the Mona Lisa', 'Leonardo da Vinci.'), ('how many days are in a leap year', '366.'),
                ('what is the boiling point of water', '100 degrees Celsius.')),
}

#: small talk (direct form, embedded form, reply): robot requests that need no memory (training split only)
CHITCHAT = (
    ('how are you today?', 'how you are doing today', 'I am fine, thank you.'),
    ('what time is it?', 'what time it is', 'Let me check the clock.'),
    ('tell me a joke.', 'a good joke', 'Why did the robot cross the road? It was programmed to.'),
    ('what can you do?', 'what you can do', 'I can remember things for you and answer questions.'),
    ('what is your name?', 'what your name is', 'I am your home robot.'),
    ('is your battery low?', 'whether your battery is low', 'My battery is fine.'),
    ('are you listening?', 'whether you are listening', 'Yes, I am listening.'),
    ('how do I boil an egg?', 'how to boil an egg', 'About eight minutes in boiling water.'),
)


def be(plural: bool) -> str:
    """The verb for a plural or singular subject: 'are' or 'is'."""
    return 'are' if plural else 'is'


def capital(text: str) -> str:
    """``text`` with its first letter upper-case."""
    return text[:1].upper() + text[1:]


__all__ = ['ATTR_FACT', 'ATTR_YOU', 'ATTR_VALUES', 'DAYS', 'TIMES', 'DELAYS', 'VOCAB', 'TRIVIA', 'CHITCHAT', 'be',
           'capital']
