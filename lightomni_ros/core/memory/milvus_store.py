# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""The Milvus side of fleet memory: one client, the fleet's collections, rows <-> memory records, filters.

Collections of fleet ``F`` (``lightomni_F_<name>``):

- ``semantic`` / ``episodic``: one row per entry, primary key the public id (robot slot << 40 | row id), the
  robot id, span, text fields, face ids (``ARRAY<VARCHAR>``), the L2-normalised vector (inner product = cosine);
- ``profiles``: one row per person (primary key the face id), the robot that first stored them, name, attributes,
  face embedding (JSON text: embedding sizes differ between face backends), avatar (base64);
- ``sg_nodes``: every robot's S_g nodes (primary key the public id);
- ``fleet``: the robot registry (``robot/<id>`` -> slot, ``slot/<n>`` -> robot id), the embedder the fleet
  indexes with, and forget announcements (``forget/<robot>/<n>``).

Milvus needs a vector field in every collection: the ones without vectors carry a constant 2-d ``pad``.
Works against a Milvus server (standalone or cluster, ``http(s)://host:port``) and milvus-lite (a local ``*.db``).
Credentials and TLS options are passed to pymilvus and never logged.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import zlib
from typing import Any, Iterable, Sequence

import numpy as np

from .backend import EntryFilter
from .config import MemoryConfig
from .profiles import Profile
from .store import KIND_EPISODIC, KIND_NAMES, KIND_SEMANTIC, EpisodicEntry, SemanticEntry

log = logging.getLogger('lightomni.memory')

TOKEN_ENV = 'LIGHTOMNI_MILVUS_TOKEN'
TEXT_MAX = 65535            # Milvus VARCHAR limit (bytes)
FACES_MAX = 64
ROW_FIELDS = {
    KIND_SEMANTIC: ['id', 'robot', 'start', 'end', 'content', 'norm', 'pinned', 'mentions', 'source_segment',
                    'face_ids'],
    KIND_EPISODIC: ['id', 'robot', 'start', 'end', 'visual', 'audio', 'response', 'raw_refs', 'source_segment',
                    'face_ids'],
}
PROFILE_FIELDS = ['face_id', 'robot', 'name', 'attributes', 'avatar', 'avatar_format', 'embedding',
                  'embedding_backend', 'observations', 'first_seen', 'last_seen', 'updated']
SG_FIELDS = ['id', 'robot', 'level', 'start', 'end', 'first_segment', 'last_segment', 'text', 'children',
             'face_ids', 'producer', 'live', 'parent', 'episodic_id']
PAD = [0.0, 1.0]


class MilvusUnavailable(RuntimeError):
    """pymilvus is not installed, or the server cannot be reached (the message says which)."""


def robot_slot(robot_id: str) -> int:
    """The robot's fleet slot (1 .. 2^23 - 1) in the high bits of its public ids: a stable hash of its id.

    Two robot ids with the same slot are refused when the second registers (the registry holds every slot).
    """
    return 1 + zlib.crc32(robot_id.encode()) % ((1 << 23) - 1)


def quoted(text: str) -> str:
    """A string literal for a Milvus filter expression."""
    return json.dumps(text)


def clip(text: str, limit: int = TEXT_MAX - 16) -> str:
    """Text cut to fit a VARCHAR field (bytes, on a character boundary)."""
    raw = (text or '').encode()
    return text if len(raw) <= limit else raw[:limit].decode(errors='ignore')


def filter_expr(filt: EntryFilter | None, exclude_robot: str = '') -> str:
    """The Milvus boolean expression of an entry filter (and of leaving one robot's rows out)."""
    cond = []
    if filt is not None and filt.robots is not None:
        robots = [r for r in filt.robots if r != exclude_robot]
        cond.append(f'robot in {json.dumps(robots)}' if robots else 'id < 0')
    elif exclude_robot:
        cond.append(f'robot != {quoted(exclude_robot)}')
    if filt is not None and filt.end is not None:
        cond.append(f'start <= {float(filt.end)!r}')
    if filt is not None and filt.start is not None:
        cond.append(f'end >= {float(filt.start)!r}')
    return ' and '.join(cond)


def safe_uri(uri: str) -> str:
    """The URI without credentials written into it (``https://user:password@host``), for logs."""
    return re.sub(r'//[^/@]*@', '//***@', uri)


def redact(text: str, cfg: MemoryConfig) -> str:
    """Text (an error message) with the configured credentials cut out."""
    for secret in (cfg.milvus_token, os.environ.get(TOKEN_ENV, '')):
        if secret:
            text = text.replace(secret, '***')
    return re.sub(r'//[^/@\s]*@', '//***@', text)


def client_options(cfg: MemoryConfig) -> dict[str, Any]:
    """Keyword arguments of ``MilvusClient`` (credentials included: never log them)."""
    opts: dict[str, Any] = {'uri': cfg.milvus_uri, 'timeout': cfg.milvus_timeout_s}
    token = cfg.milvus_token or os.environ.get(TOKEN_ENV, '')
    if token:
        opts['token'] = token
    if cfg.milvus_ca_pem or cfg.milvus_client_pem or cfg.milvus_uri.startswith('https://'):
        opts['secure'] = True
    if cfg.milvus_client_pem:   # mutual TLS: pymilvus wants the CA beside the client pair
        opts.update(client_pem_path=cfg.milvus_client_pem, client_key_path=cfg.milvus_client_key,
                    ca_pem_path=cfg.milvus_ca_pem)
    elif cfg.milvus_ca_pem:     # one-way TLS: the server's certificate is checked against this CA
        opts['server_pem_path'] = cfg.milvus_ca_pem
    if cfg.milvus_server_name:
        opts['server_name'] = cfg.milvus_server_name
    return opts


class MilvusStore:
    """The fleet's collections on one Milvus (server or milvus-lite file)."""

    def __init__(self, cfg: MemoryConfig, dim: int) -> None:
        try:
            from pymilvus import DataType, MilvusClient
        except ImportError as e:
            raise MilvusUnavailable('memory.backend "milvus" needs pymilvus (pip install -r requirements/fleet.txt)'
                                    f': {e}') from e
        self.cfg = cfg
        self.dim = int(dim)
        self.prefix = f'lightomni_{cfg.fleet_id}_'
        self._types = DataType
        if not cfg.milvus_uri.startswith(('http://', 'https://', 'tcp://', 'unix:')):
            # milvus-lite serves the file from a gRPC server in this process, which logs every unimplemented call
            logging.getLogger('grpc._server').setLevel(logging.CRITICAL)
        self.client = MilvusClient(**client_options(cfg))
        self._ensure_collections()

    def name(self, what: str) -> str:
        """Full collection name."""
        return self.prefix + what

    def close(self) -> None:
        """Close the connection."""
        try:
            self.client.close()
        except Exception:  # noqa: BLE001 - closing a dead connection
            pass

    # -- schema ----------------------------------------------------------------------------------------------------
    def _ensure_collections(self) -> None:
        t = self._types
        c = self.client

        def make(what: str, pk: tuple[str, Any], fields: list[tuple], vector_dim: int, metric: str) -> None:
            name = self.name(what)
            if c.has_collection(name):
                return
            schema = c.create_schema(auto_id=False, enable_dynamic_field=False)
            if pk[1] == t.VARCHAR:
                schema.add_field(pk[0], t.VARCHAR, is_primary=True, max_length=256)
            else:
                schema.add_field(pk[0], t.INT64, is_primary=True)
            for fname, ftype, extra in fields:
                schema.add_field(fname, ftype, **extra)
            vec = 'vector' if vector_dim != len(PAD) else 'pad'
            schema.add_field(vec, t.FLOAT_VECTOR, dim=vector_dim)
            index = c.prepare_index_params()
            if vec == 'vector':
                index.add_index(vec, index_type='HNSW', metric_type=metric,
                                params={'M': self.cfg.hnsw_m, 'efConstruction': self.cfg.hnsw_ef_construction})
            else:
                index.add_index(vec, index_type='FLAT', metric_type=metric)
            c.create_collection(name, schema=schema, index_params=index, consistency_level='Bounded')
            log.info('created Milvus collection %s', name)

        text = {'max_length': TEXT_MAX}
        short = {'max_length': 256}
        faces = {'element_type': t.VARCHAR, 'max_capacity': FACES_MAX, 'max_length': 64}
        common = [('robot', t.VARCHAR, {'max_length': 64}), ('start', t.DOUBLE, {}), ('end', t.DOUBLE, {}),
                  ('source_segment', t.INT64, {}), ('face_ids', t.ARRAY, faces)]
        make('semantic', ('id', t.INT64), common + [('content', t.VARCHAR, text), ('norm', t.VARCHAR, text),
                                                    ('pinned', t.BOOL, {}), ('mentions', t.INT64, {})],
             self.dim, 'IP')
        make('episodic', ('id', t.INT64), common + [('visual', t.VARCHAR, text), ('audio', t.VARCHAR, text),
                                                    ('response', t.VARCHAR, text), ('raw_refs', t.VARCHAR, text)],
             self.dim, 'IP')
        make('profiles', ('face_id', t.VARCHAR), [
            ('robot', t.VARCHAR, {'max_length': 64}), ('name', t.VARCHAR, short), ('attributes', t.VARCHAR, text),
            ('avatar', t.VARCHAR, text), ('avatar_format', t.VARCHAR, short), ('embedding', t.VARCHAR, text),
            ('embedding_backend', t.VARCHAR, short), ('observations', t.INT64, {}), ('first_seen', t.DOUBLE, {}),
            ('last_seen', t.DOUBLE, {}), ('updated', t.DOUBLE, {})], len(PAD), 'L2')
        make('sg_nodes', ('id', t.INT64), [
            ('robot', t.VARCHAR, {'max_length': 64}), ('level', t.INT64, {}), ('start', t.DOUBLE, {}),
            ('end', t.DOUBLE, {}), ('first_segment', t.INT64, {}), ('last_segment', t.INT64, {}),
            ('text', t.VARCHAR, text), ('children', t.VARCHAR, text), ('face_ids', t.VARCHAR, text),
            ('producer', t.VARCHAR, short), ('live', t.BOOL, {}), ('parent', t.INT64, {}),
            ('episodic_id', t.INT64, {})], len(PAD), 'L2')
        make('fleet', ('key', t.VARCHAR), [('value', t.VARCHAR, text), ('updated', t.DOUBLE, {})], len(PAD), 'L2')
        for what in ('semantic', 'episodic', 'profiles', 'sg_nodes', 'fleet'):
            c.load_collection(self.name(what))

    # -- the fleet registry ------------------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        """A registry value (strongly consistent read)."""
        rows = self.client.get(self.name('fleet'), ids=[key], output_fields=['value'])
        return rows[0]['value'] if rows else None

    def set_meta(self, items: dict[str, str], now: float) -> None:
        """Write registry values."""
        self.client.upsert(self.name('fleet'), [{'key': k, 'value': v, 'updated': now, 'pad': PAD}
                                                for k, v in items.items()])

    def register(self, robot_id: str, slot: int, embedder: str, now: float) -> None:
        """Claim this robot's slot and check the fleet's embedder; raise MilvusUnavailable on a conflict."""
        fleet_embedder = self.get_meta('embedder')
        if fleet_embedder and fleet_embedder != embedder:
            raise MilvusUnavailable(f'fleet {self.cfg.fleet_id!r} is indexed with the text embedder {fleet_embedder}, '
                                    f'this robot uses {embedder}: set the same embedding.backend on every robot')
        owner = self.get_meta(f'slot/{slot}')
        if owner and owner != robot_id:
            raise MilvusUnavailable(f'robot ids {owner!r} and {robot_id!r} hash to the same fleet slot {slot}: '
                                    'rename one of them')
        if owner != robot_id or not fleet_embedder:
            self.set_meta({'embedder': embedder, f'slot/{slot}': robot_id, f'robot/{robot_id}': str(slot)}, now)

    def forgets(self) -> list[dict[str, Any]]:
        """Every forget announcement of the fleet."""
        rows = self.client.query(self.name('fleet'), filter='key like "forget/%"', output_fields=['key', 'value'],
                                 consistency_level='Strong', limit=16384)
        out = []
        for r in rows:
            try:
                out.append({'key': r['key'], **json.loads(r['value'])})
            except ValueError:
                log.warning('ignoring a malformed forget announcement %s', r['key'])
        return out

    # -- entries -----------------------------------------------------------------------------------------------------
    def upsert_entries(self, kind: int, rows: list[dict[str, Any]]) -> None:
        """Write entry rows (idempotent: the public id is the primary key)."""
        if rows:
            self.client.upsert(self.name(KIND_NAMES[kind]), rows)

    def delete(self, what: str, ids: Sequence[Any]) -> None:
        """Delete rows by primary key."""
        if ids:
            self.client.delete(self.name(what), ids=list(ids))

    def delete_where(self, what: str, expr: str) -> None:
        """Delete the rows an expression selects."""
        self.client.delete(self.name(what), filter=expr)

    def search(self, kind: int, query: np.ndarray, k: int, expr: str) -> list[tuple[Any, float]]:
        """Top-``k`` (entry, score) of ``kind`` among the rows ``expr`` selects."""
        q = np.asarray(query, np.float32)
        q = q / max(float(np.linalg.norm(q)), 1e-12)
        res = self.client.search(self.name(KIND_NAMES[kind]), data=[q.tolist()], limit=k, filter=expr,
                                 output_fields=ROW_FIELDS[kind], anns_field='vector',
                                 search_params={'metric_type': 'IP', 'params': {'ef': max(self.cfg.hnsw_ef_search, k)}})
        return [(entry_from_row(kind, hit['entity'] | {'id': hit['id']}), float(hit['distance'])) for hit in res[0]]

    def get_entries(self, kind: int, ids: Sequence[int]) -> list[SemanticEntry | EpisodicEntry]:
        """Entries by public id."""
        if not ids:
            return []
        rows = self.client.get(self.name(KIND_NAMES[kind]), ids=[int(i) for i in ids], output_fields=ROW_FIELDS[kind])
        return [entry_from_row(kind, r) for r in rows]

    def get_entry_rows(self, kind: int, ids: Sequence[int]) -> list[dict[str, Any]]:
        """Raw rows (with vectors) by public id."""
        if not ids:
            return []
        return self.client.get(self.name(KIND_NAMES[kind]), ids=[int(i) for i in ids],
                               output_fields=ROW_FIELDS[kind] + ['vector'])

    def find_norm(self, norm: str, expr: str) -> SemanticEntry | None:
        """A fact with this normalized text (among the rows ``expr`` selects)."""
        cond = f'norm == {quoted(norm)}' + (f' and {expr}' if expr else '')
        rows = self.client.query(self.name('semantic'), filter=cond, output_fields=ROW_FIELDS[KIND_SEMANTIC], limit=1)
        return entry_from_row(KIND_SEMANTIC, rows[0]) if rows else None

    def count(self, what: str, expr: str = '') -> int:
        """Rows an expression selects (all when empty)."""
        rows = self.client.query(self.name(what), filter=expr, output_fields=['count(*)'], consistency_level='Strong')
        return int(rows[0]['count(*)']) if rows else 0

    def iterate(self, what: str, expr: str, fields: list[str], batch: int = 1000) -> Iterable[list[dict[str, Any]]]:
        """Rows an expression selects, in batches (primary key order)."""
        it = self.client.query_iterator(self.name(what), batch_size=batch, filter=expr, output_fields=fields,
                                        consistency_level='Strong')
        try:
            while True:
                rows = it.next()
                if not rows:
                    return
                yield rows
        finally:
            it.close()

    # -- profiles and S_g --------------------------------------------------------------------------------------------
    def profile_stamps(self) -> dict[str, tuple[float, str]]:
        """Map each fleet profile's face id to (updated, robot): small rows, the cheap check for changes."""
        rows = self.client.query(self.name('profiles'), filter='', output_fields=['face_id', 'updated', 'robot'],
                                 consistency_level='Strong', limit=16384)
        return {r['face_id']: (float(r['updated']), r['robot']) for r in rows}

    def get_profiles(self, face_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Full profile rows by face id."""
        if not face_ids:
            return {}
        rows = self.client.get(self.name('profiles'), ids=list(face_ids), output_fields=PROFILE_FIELDS)
        return {r['face_id']: r for r in rows}

    def upsert_rows(self, what: str, rows: list[dict[str, Any]]) -> None:
        """Write rows of a collection without vectors (the constant pad is added)."""
        if rows:
            self.client.upsert(self.name(what), [dict(r, pad=PAD) for r in rows])


# -- rows <-> records ----------------------------------------------------------------------------------------------
def entry_row(kind: int, e: SemanticEntry | EpisodicEntry, vector: np.ndarray, robot: str,
              normalize: bool = True) -> dict[str, Any]:
    """The Milvus row of an entry (its id already the public id; the vector L2-normalised unless told not to)."""
    v = np.asarray(vector, np.float32)
    if normalize:
        v = v / max(float(np.linalg.norm(v)), 1e-12)
    row: dict[str, Any] = {'id': int(e.id), 'robot': robot, 'start': float(e.start), 'end': float(e.end),
                           'source_segment': int(e.source_segment), 'face_ids': list(e.face_ids)[:FACES_MAX],
                           'vector': v.tolist()}
    if kind == KIND_SEMANTIC:
        from .store import normalize
        row.update(content=clip(e.content), norm=clip(normalize(e.content)), pinned=bool(e.pinned),
                   mentions=int(e.mentions))
    else:
        row.update(visual=clip(e.visual), audio=clip(e.audio), response=clip(e.response),
                   raw_refs=clip(json.dumps(list(e.raw_refs))))
    return row


def sg_row(r: Any, public_id: int, robot: str) -> dict[str, Any]:
    """The Milvus row of an S_g node (a store row; children and parents keep the robot's own node ids)."""
    return {'id': int(public_id), 'robot': robot, 'level': int(r['level']), 'start': float(r['start']),
            'end': float(r['end']), 'first_segment': int(r['first_segment']), 'last_segment': int(r['last_segment']),
            'text': r['text'], 'children': r['children'], 'face_ids': r['face_ids'], 'producer': r['producer'],
            'live': bool(r['live']), 'parent': int(r['parent'] or 0), 'episodic_id': int(r['episodic_id'] or 0)}


def entry_from_row(kind: int, r: dict[str, Any]) -> SemanticEntry | EpisodicEntry:
    """A memory record from a Milvus row."""
    faces = sorted(r.get('face_ids') or [])
    if kind == KIND_SEMANTIC:
        return SemanticEntry(content=r['content'], start=r['start'], end=r['end'], pinned=bool(r['pinned']),
                             source_segment=int(r['source_segment']), face_ids=faces, mentions=int(r['mentions']),
                             id=int(r['id']), robot_id=r['robot'])
    return EpisodicEntry(start=r['start'], end=r['end'], visual=r['visual'], audio=r['audio'], response=r['response'],
                         raw_refs=json.loads(r['raw_refs'] or '[]'), source_segment=int(r['source_segment']),
                         face_ids=faces, id=int(r['id']), robot_id=r['robot'])


def profile_row(p: Profile, robot: str, now: float) -> dict[str, Any]:
    """The Milvus row of a profile (``robot``: who stored the person first)."""
    avatar = base64.b64encode(p.avatar).decode() if p.avatar else ''
    if len(avatar) > TEXT_MAX - 16:
        log.warning('avatar of %s (%d bytes) is too large for the fleet store; it stays on this robot', p.face_id,
                    len(p.avatar))
        avatar = ''
    emb = '' if p.embedding is None else json.dumps([float(x) for x in np.asarray(p.embedding, np.float32)])
    return {'face_id': p.face_id, 'robot': robot, 'name': clip(p.name, 250),
            'attributes': clip(json.dumps(p.attributes, sort_keys=True)), 'avatar': avatar,
            'avatar_format': p.avatar_format if avatar else '', 'embedding': emb,
            'embedding_backend': clip(p.embedding_backend, 250), 'observations': int(p.observations),
            'first_seen': float(p.first_seen), 'last_seen': float(p.last_seen), 'updated': float(now)}


def profile_from_row(r: dict[str, Any]) -> Profile:
    """A profile from a Milvus row (its per-robot counters start at 0)."""
    emb = json.loads(r['embedding']) if r.get('embedding') else None
    return Profile(face_id=r['face_id'], name=r['name'], attributes=json.loads(r['attributes'] or '{}'),
                   avatar=base64.b64decode(r['avatar']) if r.get('avatar') else b'',
                   avatar_format=r.get('avatar_format', ''),
                   embedding=None if emb is None else np.asarray(emb, np.float32),
                   embedding_backend=r['embedding_backend'], observations=int(r['observations']),
                   first_seen=float(r['first_seen']), last_seen=float(r['last_seen']), robot_id=r['robot'])


def merge_profiles(remote: Profile, local: Profile) -> Profile:
    """One person as two robots know them: the fleet's row merged with this robot's change.

    Names and attributes this robot set win (it is pushing a change); the face embedding with more observations
    wins; first/last seen widen; the robot that stored the person first stays the owner.
    """
    take_local = local.embedding is not None and (remote.embedding is None or local.observations >= remote.observations)
    return Profile(face_id=remote.face_id, name=local.name or remote.name,
                   attributes={**remote.attributes, **local.attributes},
                   avatar=local.avatar or remote.avatar,
                   avatar_format=local.avatar_format if local.avatar else remote.avatar_format,
                   embedding=local.embedding if take_local else remote.embedding,
                   embedding_backend=local.embedding_backend if take_local else remote.embedding_backend,
                   observations=max(local.observations, remote.observations),
                   first_seen=min([t for t in (local.first_seen, remote.first_seen) if t] or [0.0]),
                   last_seen=max(local.last_seen, remote.last_seen),
                   segments_since_update=local.segments_since_update, robot_id=remote.robot_id or local.robot_id)


__all__ = ['MilvusStore', 'MilvusUnavailable', 'robot_slot', 'filter_expr', 'client_options', 'entry_row', 'sg_row',
           'entry_from_row', 'profile_row', 'profile_from_row', 'merge_profiles', 'TOKEN_ENV', 'ROW_FIELDS',
           'safe_uri', 'redact',
           'PROFILE_FIELDS', 'SG_FIELDS', 'PAD']
