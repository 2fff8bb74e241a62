# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Forgetting: a person, named entries, or a time range, out of every place memory holds them.

A forgotten person leaves their profile (avatar, face embedding), the entries that mention them (entries about others
too are redacted, not dropped: the sentences naming them go), the audio clips of those entries, S_g text, reminders,
Topics still queued, and other people's profiles. Rows are deleted in one transaction, vectors removed from the
indexes, the WAL checkpointed and the index files rewritten, so nothing forgotten lingers on disk. Each forget of a
person or a time range also leaves a tombstone: a Topic recorded before the forget that arrives after it (it was
still in the reflex node's sleep queue) is scrubbed or dropped on arrival (:func:`apply_tombstones`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from ..memory import profiles as prof
from ..memory import voices as vox
from ..memory.entries import KINDS_BOTH
from ..memory.longterm import LongTermMemory
from ..memory.store import KIND_EPISODIC, KIND_SEMANTIC, EpisodicEntry, SemanticEntry, Store
from ..topic import TopicData
from .errors import RequestError
from .rawfiles import RawFiles
from .summarizer import sentences

FORGOTTEN = '(forgotten)'
_ENTRY_ID = re.compile(r'^(semantic|episodic):(\d+)$')


@dataclass
class ForgetResult:
    """Counts of what a forget removed or redacted."""

    removed_entries: int = 0
    redacted_entries: int = 0
    removed_profiles: int = 0
    redacted_profiles: int = 0
    removed_vectors: int = 0
    changed_state_nodes: int = 0
    removed_reminders: int = 0
    removed_pending: int = 0
    removed_voices: int = 0
    #: the voice ids removed (perception drops them from its registry)
    voice_ids: list[str] = field(default_factory=list)
    removed_files: int = 0

    def message(self) -> str:
        """Human-readable summary."""
        return ', '.join(f'{k.replace("_", " ")}: {v}' for k, v in vars(self).items() if k != 'voice_ids')


def redact_text(text: str, pat: re.Pattern, keep_empty: bool = False) -> str:
    """Drop every sentence/clause that matches ``pat``; '' when nothing is left."""
    if not text or not pat.search(text):
        return text
    kept = [s for s in sentences([text]) if not pat.search(s)]
    out = ' '.join(kept).strip()
    return out if (out or keep_empty) else ''


def person_pattern(face_id: str, name: str = '') -> re.Pattern:
    """What names a person in text: their face id, and their name as a whole word."""
    words = [face_id] + ([name] if name else [])
    return re.compile('|'.join(re.escape(w) if w.startswith('<') else rf'\b{re.escape(w)}\b' for w in words), re.I)


def scrub_topic(t: TopicData, face_id: str, pat: re.Pattern) -> list[str]:
    """Remove a person from a Topic in place; return the raw references dropped with them (their files go too)."""
    dropped = list(t.raw_refs) if face_id in t.face_ids else []
    t.face_ids = [f for f in t.face_ids if f != face_id]
    t.semantic = [s for s in t.semantic if not pat.search(s)]
    t.remembered = [s for s in t.remembered if not pat.search(s)]
    t.visual, t.audio, t.response = (redact_text(x, pat, keep_empty=True) for x in (t.visual, t.audio, t.response))
    t.reminders = [r for r in t.reminders if r.face_id != face_id and not pat.search(r.text)]
    if dropped:
        t.raw_refs = []
    return dropped


def apply_tombstones(store: Store, t: TopicData) -> tuple[bool, list[str]]:
    """Apply the forgets made after ``t`` was recorded: (False when the Topic must be dropped, raw refs to delete).

    A person's tombstone holds hashes of their face id and name: the words of the Topic whose hashes match are the
    ones scrubbed.
    """
    dropped: list[str] = []
    tombs = store.tombstones(after=t.start)
    if not tombs:
        return True, dropped
    words = set(t.face_ids) | set(re.findall(r"[A-Za-z][\w'-]*", ' '.join(
        t.semantic + t.remembered + [t.visual, t.audio, t.response] + [r.text for r in t.reminders])))
    hashed = {store.word_hash(w): w for w in words}
    for tb in tombs:
        hashes = json.loads(tb['hashes'])
        if hashes:
            hits = [hashed[h] for h in hashes if h in hashed]
            if hits:
                face = next((w for w in hits if w.startswith('<')), '')
                names = [w for w in hits if not w.startswith('<')]
                dropped += scrub_topic(t, face, person_pattern(face or names[0], ' '.join(names) if face else ''))
        elif t.start <= tb['end'] and t.end >= tb['start']:
            return False, dropped + list(t.raw_refs)
    return True, dropped


class Forgetting:
    """The three Forget scopes on one :class:`LongTermMemory`."""

    def __init__(self, memory: LongTermMemory, files: RawFiles | None = None) -> None:
        self.memory = memory
        self.files = files or RawFiles([])

    def face(self, face_id: str, names: Sequence[str] = (), broadcast: bool = True) -> ForgetResult:
        """Forget a person: profile, avatar, face embedding, voices, entries and S_g text naming them, reminders.

        ``names``: further words that name them (a forget announced by another robot of the fleet carries the name,
        which may be unknown here). ``broadcast``: tell the backend, which makes the forget fleet-wide.
        """
        if not prof.valid_face_id(face_id):
            raise RequestError(f'face id must look like <face_N>: {face_id!r}')
        with self.memory.lock:
            p = prof.get(self.memory.store, face_id)
            voices = [v.voice_id for v in vox.list_all(self.memory.store, face_id)]
            return self._person(face_id, voices + ([p.name] if p and p.name else []) + [n for n in names if n], voices,
                                broadcast)

    def voice(self, voice_id: str) -> ForgetResult:
        """Forget a voice heard without a face: its identity and what memory says it said."""
        if not vox.valid_voice_id(voice_id):
            raise RequestError(f'voice id must look like <voice_N>: {voice_id!r}')
        with self.memory.lock:
            v = vox.get(self.memory.store, voice_id)
            if v is not None and v.face_id:
                return self.face(v.face_id)     # a voice with a face is that person: forget them whole
            return self._person(voice_id, [v.name] if v is not None and v.name else [], [voice_id])

    def _person(self, face_id: str, also: list[str], voice_ids: list[str], broadcast: bool = True) -> ForgetResult:
        """Forget everything that names ``face_id`` (a face or voice id) or any of ``also`` (voices, a name).

        ``broadcast``: the backend makes it fleet-wide, with the names but not the voice ids (those are this robot's:
        another robot's ``<voice_3>`` is someone else).
        """
        m = self.memory
        res = ForgetResult()
        with m.lock:
            words = list(dict.fromkeys([face_id] + also))
            pat = re.compile('|'.join(re.escape(w) if w.startswith('<') else rf'\b{re.escape(w)}\b' for w in words),
                             re.I)
            files: list[str] = []
            redacted: dict[int, list[Any]] = {KIND_SEMANTIC: [], KIND_EPISODIC: []}
            removed: dict[int, list[int]] = {KIND_SEMANTIC: [], KIND_EPISODIC: []}
            with m.store.transaction():
                for kind in KINDS_BOTH:
                    ids = m.entries.ids_mentioning(kind, face_id, words[1:])
                    for e in m.entries.get(kind, ids).values():
                        text = e.content if isinstance(e, SemanticEntry) else ' '.join((e.visual, e.audio, e.response))
                        if face_id not in e.face_ids and not pat.search(text):
                            continue  # a substring hit only (e.g. "Ann" in "announce")
                        others = [f for f in e.face_ids if f != face_id]
                        red = _redact_entry(e, pat) if others else None
                        if isinstance(e, EpisodicEntry):
                            files += e.raw_refs     # their voice is in the clip, whoever else spoke
                        removed[kind].append(e.id)
                        if red is None:
                            res.removed_entries += 1
                        else:
                            red.face_ids = others
                            redacted[kind].append(red)
                            res.redacted_entries += 1
                    m.entries.delete_rows(kind, removed[kind])
                res.changed_state_nodes += self._redact_nodes(
                    lambda r: face_id in json.loads(r['face_ids']) or bool(pat.search(r['text'])),
                    lambda text: redact_text(text, pat), drop_face=face_id)
                res.removed_reminders = m.store.db.execute('DELETE FROM reminders WHERE face_id=? OR '
                                                           'instr(lower(text), ?) > 0',
                                                           (face_id, face_id.lower())).rowcount
                res.removed_pending, pending_files = self._scrub_pending(face_id, pat)
                files += pending_files
                res.removed_profiles = m.store.delete_profile(face_id)
                res.redacted_profiles = self._scrub_profiles(pat)
                res.removed_voices = vox.delete(m.store, voice_ids)
                res.voice_ids = list(voice_ids)
                m.store.add_tombstone(m.clock(), words=words)
                m.store.bump('gallery.version')
                m.store.bump('voices.version')
                if broadcast:
                    m.entries.record_forget(face_id, [w for w in words[1:] if not w.startswith('<')])
            res.removed_vectors = m.entries.unindex(removed)
            for kind, rows in redacted.items():      # under new ids with fresh vectors: the old ones are gone
                m.entries.add(kind, rows)
            res.removed_files = self.files.delete(files)
            self._after()
        return res

    def entries(self, entry_ids: Sequence[str]) -> ForgetResult:
        """Forget entries named ``semantic:<id>`` / ``episodic:<id>`` (and the level-0 S_g text of an event)."""
        parsed: dict[int, list[int]] = {KIND_SEMANTIC: [], KIND_EPISODIC: []}
        for s in entry_ids:
            match = _ENTRY_ID.match(s.strip())
            if not match:
                raise RequestError(f'entry id {s!r} is not "semantic:<id>" or "episodic:<id>"')
            parsed[KIND_SEMANTIC if match.group(1) == 'semantic' else KIND_EPISODIC].append(int(match.group(2)))
        if not any(parsed.values()):
            raise RequestError('entry_ids is empty')
        m = self.memory
        res = ForgetResult()
        with m.lock:
            files = [r for e in m.entries.get(KIND_EPISODIC, parsed[KIND_EPISODIC]).values() for r in e.raw_refs]
            with m.store.transaction():
                epi = {m.entries.row_id(i) for i in parsed[KIND_EPISODIC]} - {None}
                res.changed_state_nodes = self._redact_nodes(lambda r: r['episodic_id'] in epi, lambda _t: '')
                for kind, ids in parsed.items():
                    res.removed_entries += m.entries.delete_rows(kind, ids)
            res.removed_vectors = m.entries.unindex(parsed)
            res.removed_files = self.files.delete(files)
            self._after()
        return res

    def time_range(self, start: float, end: float) -> ForgetResult:
        """Forget every entry, S_g node and queued Topic whose span overlaps [start, end]."""
        if end < start:
            raise RequestError('end is before start')
        m = self.memory
        res = ForgetResult()
        with m.lock:
            removed = {kind: m.entries.ids_in_range(kind, start, end) for kind in KINDS_BOTH}
            files = [r for e in m.entries.get(KIND_EPISODIC, removed[KIND_EPISODIC]).values() for r in e.raw_refs]
            with m.store.transaction():
                for kind, ids in removed.items():
                    res.removed_entries += m.entries.delete_rows(kind, ids)
                res.changed_state_nodes = self._redact_nodes(lambda r: r['start'] <= end and r['end'] >= start,
                                                             lambda _t: '')
                for qid, payload in m.store.pending():
                    if payload['start'] <= end and payload['end'] >= start:
                        m.store.delete_pending(qid)
                        files += payload.get('raw_refs', [])
                        res.removed_pending += 1
                m.store.add_tombstone(m.clock(), start=start, end=end)
            res.removed_vectors = m.entries.unindex(removed)
            res.removed_files = self.files.delete(files)
            self._after()
        return res

    # -- helpers -------------------------------------------------------------------------------------------------
    def _redact_nodes(self, match: Callable[[Any], bool], rewrite: Callable[[str], str],
                      drop_face: str = '') -> int:
        """Rewrite the text of every S_g node (live or merged away) that ``match`` selects."""
        m = self.memory
        changed = 0
        for r in m.store.sg_rows(live_only=False):
            if not match(r):
                continue
            text = rewrite(r['text']) or FORGOTTEN
            faces = [f for f in json.loads(r['face_ids']) if f != drop_face]
            m.store.set_sg_text(r['id'], text, faces)
            node = m.tree.find(r['id'])
            if node is not None:
                node.text, node.face_ids = text, faces
            changed += 1
        if changed:
            m.store.bump('sg.version')
            m.tree.version += 1
        return changed

    def _scrub_pending(self, face_id: str, pat: re.Pattern) -> tuple[int, list[str]]:
        """Remove a forgotten person from Topics still queued (they are consolidated later); return (count, files)."""
        store = self.memory.store
        n = 0
        files: list[str] = []
        for qid, payload in store.pending():
            text = json.dumps(payload)
            if face_id not in text and not pat.search(text):
                continue
            t = TopicData.from_json(payload)
            files += scrub_topic(t, face_id, pat)
            store.db.execute('UPDATE pending SET payload=? WHERE id=?', (json.dumps(t.to_json()), qid))
            n += 1
        return n, files

    def _scrub_profiles(self, pat: re.Pattern) -> int:
        """Remove a forgotten person from other people's profiles (a relationship, a name mis-attributed)."""
        store = self.memory.store
        n = 0
        for p in prof.list_all(store):
            attrs = {k: redact_text(v, pat) for k, v in p.attributes.items()}
            name = '' if pat.search(p.name or '') else p.name
            if attrs != p.attributes or name != p.name:
                p.attributes, p.name = {k: v for k, v in attrs.items() if v}, name
                prof.save(store, p)
                n += 1
        return n

    def _after(self) -> None:
        # forgotten rows must not linger in the WAL or in saved index files
        self.memory.store.checkpoint()
        self.memory.entries.flush()
        self.memory.state_changed()


def _redact_entry(e: SemanticEntry | EpisodicEntry, pat: re.Pattern) -> SemanticEntry | EpisodicEntry | None:
    """The entry without the sentences ``pat`` matches; None when nothing is left."""
    if isinstance(e, SemanticEntry):
        text = redact_text(e.content, pat, keep_empty=True)
        if not text:
            return None
        return SemanticEntry(text, e.start, e.end, e.pinned, e.source_segment, [], e.mentions)
    fields = {f: redact_text(getattr(e, f), pat, keep_empty=True) for f in ('visual', 'audio', 'response')}
    if not any(fields.values()):
        return None
    # the clip holds the forgotten person's voice: it goes, whoever else is in the event
    return EpisodicEntry(e.start, e.end, raw_refs=[], source_segment=e.source_segment, **fields)


__all__ = ['Forgetting', 'ForgetResult', 'FORGOTTEN', 'redact_text', 'scrub_topic', 'apply_tombstones',
           'person_pattern']
