# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Fleet memory on real Milvus: milvus-lite in process, and a Milvus standalone server started by the test.

Two consolidation runtimes with their own memory folders ("robots" a and b) share one Milvus: facts and profiles
are the fleet's, episodic memory is each robot's (searchable by others with a robot filter), forgets are fleet-wide,
and writes made while the server is down wait in the outbox and arrive once, in order, when it is back.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from harness import wait_for

from lightomni_ros.core.consolidation.config import ConsolidationConfig
from lightomni_ros.core.consolidation.runtime import ConsolidationConfigs, ConsolidationRuntime, RequestError
from lightomni_ros.core.embedding import EmbeddingConfig, text_embedder
from lightomni_ros.core.memory.config import MemoryConfig
from lightomni_ros.core.memory.store import KIND_EPISODIC, KIND_SEMANTIC
from lightomni_ros.core.topic import TopicData

pytest.importorskip('pymilvus', reason='requirements/fleet.txt is not installed (FLEET=0)')

T0 = 1_780_000_000.0
FACTS = ['the spare key card is under the reception desk', 'breakfast is served on the roof terrace',
         'the gym closes at ten in the evening', 'room 204 asked for a baby cot', 'the taxi for Mr Ito comes at six',
         'the pool heater is broken until Friday', 'lost glasses were handed in at the bar',
         'the wifi password changed to sunflower']


@pytest.fixture(scope='module')
def embedder():
    return text_embedder(EmbeddingConfig(backend='minilm'))


def robot(tmp_path, embedder, name, uri, **mem):
    cfg = MemoryConfig(memory_dir=str(tmp_path / name), backend='milvus', milvus_uri=uri, robot_id=name,
                       fleet_id='test', k=3, **mem)
    return ConsolidationRuntime(ConsolidationConfigs(memory=cfg, consolidation=ConsolidationConfig(timezone='UTC')),
                                embedder=embedder)


def topic(i, **kw):
    base = dict(segment_id=i, start=T0 + 30 * i, end=T0 + 30 * i + 25, visual='a hotel lobby',
                audio=f'guest number {i} asked for towels', response='noted')
    return TopicData(**(base | kw))


def face(seed, dim=128):
    v = np.random.default_rng(seed).standard_normal(dim).astype(np.float32)
    return v / np.linalg.norm(v)


@pytest.fixture
def fleet(tmp_path, embedder):
    uri = str(tmp_path / 'fleet.db')          # milvus-lite: a real Milvus API on a local file
    a, b = robot(tmp_path, embedder, 'a', uri), robot(tmp_path, embedder, 'b', uri)
    yield a, b
    a.close()
    b.close()


def sync_all(*rts):
    reports = [rt.sync() for rt in rts]
    for r in reports:
        assert r.connected and r.backlog == 0, r
    return reports


def test_shared_semantic_own_episodic_and_filters(fleet):
    a, b = fleet
    a.enqueue(topic(1, semantic=['the guest in room 12 is allergic to peanuts'], face_ids=['<face_0>']))
    a.process_all()
    b.enqueue(topic(2, audio='the lift on floor three is out of order'))
    b.process_all()
    sync_all(a, b)
    r = b.query(text='who is allergic to peanuts?', k_semantic=3, k_episodic=3)
    hit = next(e for e, _ in r.semantic if 'peanuts' in e.content)
    assert hit.robot_id == 'a' and (hit.id >> 40) != 0                 # robot a's fact, with a's public id
    assert all(e.robot_id == 'b' for e, _ in r.episodic)               # episodic: b's own by default
    r = b.query(text='guest asked for towels', k_episodic=3, robot_ids=['a'])
    assert [e.robot_id for e, _ in r.episodic] == ['a'] and not any(e.robot_id == 'b' for e, _ in r.semantic)
    r = b.query(text='towels and the lift', k_episodic=5, robot_ids=['*'])
    assert {e.robot_id for e, _ in r.episodic} == {'a', 'b'}
    # a time window that only segment 2's span overlaps
    r = b.query(text='towels and the lift', k_episodic=5, robot_ids=['*'], window_start=T0 + 61, window_end=T0 + 70)
    assert [e.source_segment for e, _ in r.episodic] == [2]
    with pytest.raises(RequestError, match='window_end'):
        b.query(text='x', window_start=T0 + 10, window_end=T0)
    # the content filter spans the fleet: b hearing a's fact extends a's entry instead of storing a copy
    b.enqueue(topic(3, semantic=['the guest in room 12 is allergic to peanuts']))
    b.process_all()
    sync_all(b)
    assert b.entries.local_count(KIND_SEMANTIC) == 0
    ext = b.entries.get(KIND_SEMANTIC, [hit.id])[hit.id]
    assert ext.mentions == 2 and ext.end == T0 + 30 * 3 + 25
    assert b.entries.count(KIND_SEMANTIC) == a.entries.count(KIND_SEMANTIC) == 1


def test_profiles_are_shared_and_forget_is_fleet_wide(fleet):
    a, b = fleet
    a.apply_identity('<face_0>', face(0), 'dlib', 5, b'\xff\xd8jpeg', 'jpeg', new=True)
    a.remember('<face_0> keeps the car keys in the blue drawer', ['<face_0>'])
    a.enqueue(topic(1, audio='Hi robot, I am Ana.', face_ids=['<face_0>']))
    a.process_all()
    sync_all(a)
    (rep,) = sync_all(b)
    assert rep.profiles_changed == 1
    (p,) = b.profiles(['<face_0>'])
    assert p.name == 'Ana' and p.robot_id == 'a' and p.avatar == b'\xff\xd8jpeg'
    assert np.allclose(p.embedding, face(0), atol=1e-6)
    gallery_before = b.gallery_version()
    # b cannot give <face_0> to someone else: a's person keeps it
    with pytest.raises(RequestError, match='already robot a'):
        b.apply_identity('<face_0>', face(1), 'dlib', 1, new=True)
    # b learns more about Ana: the fleet's profile gets it, a's copy follows
    b.apply_identity('<face_0>', face(0), 'dlib', 9)
    sync_all(b, a)
    assert a.profiles(['<face_0>'])[0].observations == 9
    # forget through b: gone from b, from the fleet, and from a's answers and gallery
    res = b.forget_face('<face_0>')
    assert res.removed_profiles == 1 and b.gallery_version() > gallery_before
    sync_all(b)
    (rep,) = sync_all(a)
    assert [f for f, _ in rep.forgotten] == ['<face_0>']
    assert not a.profiles(['<face_0>']) and not b.profiles()
    for rt in (a, b):
        r = rt.query(text='where are the car keys?', k_semantic=5, k_episodic=5, robot_ids=['*'])
        texts = [e.content for e, _ in r.semantic] + [e.script() for e, _ in r.episodic]
        assert not any('<face_0>' in t or 'Ana' in t or 'car keys' in t for t in texts), texts
        assert not r.profiles


def test_embedded_default_needs_no_milvus(tmp_path):
    """The default backend runs with pymilvus unimportable and never imports it."""
    code = f"""
import sys
sys.modules['pymilvus'] = None
sys.modules['milvus_lite'] = None
from lightomni_ros.core.consolidation.runtime import ConsolidationConfigs, ConsolidationRuntime
from lightomni_ros.core.memory.config import MemoryConfig
rt = ConsolidationRuntime(ConsolidationConfigs(memory=MemoryConfig(memory_dir={str(tmp_path / 'm')!r})))
rt.remember('the meeting moved to Thursday')
assert 'Thursday' in rt.query(text='when is the meeting?').semantic[0][0].content
assert rt.sync().shared is False and rt.backend_name() == 'embedded'
assert 'lightomni_ros.core.memory.milvus_backend' not in sys.modules
print('ok')
"""
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and out.stdout.strip().endswith('ok'), out.stderr[-2000:]


def test_missing_fleet_settings_are_clear_errors():
    from lightomni_ros.core.config import ConfigError
    with pytest.raises(ConfigError, match='milvus_uri'):
        MemoryConfig(backend='milvus', robot_id='a').check()
    with pytest.raises(ConfigError, match='robot_id'):
        MemoryConfig(backend='milvus', milvus_uri='http://127.0.0.1:1').check()
    with pytest.raises(ConfigError, match='robot_id'):
        MemoryConfig(robot_id='no spaces').check()
    assert 'hunter2' not in repr(MemoryConfig(milvus_token='hunter2'))


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    from lightomni_ros.tools.milvus_server import MilvusServer
    srv = MilvusServer(tmp_path_factory.mktemp('milvus')).start()
    yield srv
    srv.stop()


def test_outbox_keeps_writes_while_the_server_is_down(tmp_path, embedder, server):
    a = robot(tmp_path, embedder, 'a', server.uri, milvus_timeout_s=2.0, sync_period_s=0.1)
    b = robot(tmp_path, embedder, 'b', server.uri, milvus_timeout_s=2.0, sync_period_s=0.1)
    try:
        for i in range(1, 4):
            a.enqueue(topic(i, semantic=[FACTS[i - 1]]))
        a.process_all()
        wait_for(lambda: a.sync().backlog == 0, 60, what='first topics in Milvus')
        server.kill()
        for i in range(4, 9):       # consolidated while Milvus is down: local first, outbox grows
            a.enqueue(topic(i, semantic=[FACTS[i - 1]]))
        a.process_all()
        down = a.sync()
        assert not down.connected and down.backlog > 0 and down.error
        assert a.entries.local_count(KIND_SEMANTIC) == 8
        assert 'lost glasses' in a.query(text='where are the lost glasses?').semantic[0][0].content  # answers locally
        server.start()
        wait_for(lambda: (lambda r: r.connected and r.backlog == 0)(a.sync()), 120, interval=0.5,
                 what='outbox drained after the restart')
        # every fact arrived once: a's eight facts and eight events, no duplicates
        wait_for(lambda: b.entries.count(KIND_SEMANTIC, None) - b.entries.local_count(KIND_SEMANTIC) == 8, 30,
                 interval=0.5, what='b sees all eight facts')
        seen = a.entries.remote.count('episodic', 'robot == "a"')
        assert seen == 8, seen
        for question, answer in (('when does the gym close?', 'gym'), ('what is the wifi password?', 'sunflower'),
                                 ('is the pool heated?', 'pool heater')):
            r = b.query(text=question, k_semantic=1)
            assert answer in r.semantic[0][0].content and r.semantic[0][0].robot_id == 'a'
        assert b.entries.count(KIND_EPISODIC, None) == 8    # b's own none + a's eight
    finally:
        a.close()
        b.close()


def test_a_port_taken_before_the_server_binds_it_gets_new_ports(tmp_path):
    """A free port chosen for the server can be taken before Milvus binds it: the first start picks others."""
    import socket

    from lightomni_ros.tools.milvus_server import MilvusServer
    srv = MilvusServer(tmp_path / 'taken')
    taken = srv.ports['root_coord_port']      # the port of the component that failed to bind in a CI run
    with socket.socket() as s:
        s.bind(('0.0.0.0', taken))
        s.listen()
        with srv:
            assert srv.healthy() and srv.ports['root_coord_port'] != taken
            assert 'address already in use' in srv.log_tail(10 ** 6)


def test_token_authentication_passes_through(tmp_path, embedder, monkeypatch):
    from lightomni_ros.tools.milvus_server import MilvusServer
    with MilvusServer(tmp_path / 'auth', authorization=True) as srv:
        bad = robot(tmp_path, embedder, 'a', srv.uri, milvus_token='root:wrong', milvus_timeout_s=3.0)
        rep = bad.sync()
        assert not rep.connected and rep.error and 'root:wrong' not in rep.error   # the reason, never the token
        bad.close()
        monkeypatch.setenv('LIGHTOMNI_MILVUS_TOKEN', 'root:Milvus')   # the server's default credentials
        good = robot(tmp_path, embedder, 'b', srv.uri, milvus_timeout_s=5.0)
        good.remember('the spa opens at nine')
        rep = good.sync()
        assert rep.connected and rep.backlog == 0 and 'Milvus' not in rep.error
        good.close()


def test_migrate_to_milvus_and_back_resumable_and_verified(tmp_path, embedder, monkeypatch):
    from lightomni_ros.core.memory import migration
    from lightomni_ros.core.memory.milvus_store import MilvusStore
    from lightomni_ros.cli import main

    src = ConsolidationRuntime(ConsolidationConfigs(
        memory=MemoryConfig(memory_dir=str(tmp_path / 'src'), k=3),
        consolidation=ConsolidationConfig(timezone='UTC')), embedder=embedder)
    src.apply_identity('<face_0>', face(0), 'dlib', 4, b'jpeg-bytes', 'jpeg', new=True)
    for i, fact in enumerate(FACTS, 1):
        src.enqueue(topic(i, semantic=[fact], face_ids=['<face_0>'] if i % 2 else []))
    src.process_all()
    src.remember('the manager is called Rosa')
    before = src.query(text='what is the wifi password?', k_semantic=2, k_episodic=2)
    counts = {k: src.entries.count(k) for k in (KIND_SEMANTIC, KIND_EPISODIC)}
    sg = len(src.store.sg_rows(live_only=False))
    src.close()
    uri = str(tmp_path / 'fleet.db')
    cfg = MemoryConfig(backend='milvus', milvus_uri=uri, robot_id='r1', fleet_id='mig')
    monkeypatch.setattr(migration, 'BATCH', 3)
    calls = {'n': 0}
    real = MilvusStore.upsert_entries

    def flaky(self, kind, rows):       # the connection drops in the middle of the episodic table
        calls['n'] += 1
        if kind == KIND_EPISODIC and calls['n'] == 5:
            raise ConnectionError('server went away')
        return real(self, kind, rows)
    monkeypatch.setattr(MilvusStore, 'upsert_entries', flaky)
    with pytest.raises(ConnectionError):
        migration.to_milvus(tmp_path / 'src', cfg, progress=False)
    report = migration.to_milvus(tmp_path / 'src', cfg, progress=False)     # resumes
    assert report.ok, report.checks
    assert report.copied['profiles'] == 0 and report.copied['episodic'] < counts[KIND_EPISODIC]
    by = {c.table: c for c in report.checks}
    assert by['semantic'].target_rows == counts[KIND_SEMANTIC] and by['episodic'].target_rows == counts[KIND_EPISODIC]
    assert by['sg_nodes'].target_rows == sg and by['profiles'].target_rows == 1
    # and back into a new folder, through the command line
    rc = main(['memory', 'migrate', '--to', 'local', str(tmp_path / 'back'), '--from', uri, '--robot-id', 'r1',
               '--fleet-id', 'mig', '--no-progress'])
    assert rc == 0
    back = ConsolidationRuntime(ConsolidationConfigs(
        memory=MemoryConfig(memory_dir=str(tmp_path / 'back'), k=3),
        consolidation=ConsolidationConfig(timezone='UTC')), embedder=embedder)
    after = back.query(text='what is the wifi password?', k_semantic=2, k_episodic=2)
    assert [(e.content, e.id) for e, _ in after.semantic] == [(e.content, e.id) for e, _ in before.semantic]
    assert [e.script() for e, _ in after.episodic] == [e.script() for e, _ in before.episodic]
    assert back.profiles()[0].avatar == b'jpeg-bytes' and len(back.global_state().nodes) > 0
    assert main(['memory', 'migrate', '--to', 'local', str(tmp_path / 'back'), '--from', uri, '--robot-id', 'r1',
                 '--fleet-id', 'mig', '--no-progress']) == 0     # a second run finds everything there already
    back.close()


def _certs(folder):
    """A CA and a server certificate for 127.0.0.1/localhost signed by it (openssl CLI)."""
    import shutil
    if not shutil.which('openssl'):
        pytest.skip('openssl CLI not found')
    folder.mkdir()

    def ssl(*args):
        subprocess.run(['openssl', *args], cwd=folder, check=True, capture_output=True)
    for name in ('ca', 'other_ca'):
        ssl('req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', f'{name}.key', '-out', f'{name}.pem',
            '-days', '2', '-subj', f'/CN={name}')
    ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost')
    (folder / 'ext.cnf').write_text('subjectAltName=DNS:localhost,IP:127.0.0.1\n')
    ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out',
        'server.pem', '-days', '2', '-extfile', 'ext.cnf')
    return folder


def test_tls_options_pass_through(tmp_path, embedder):
    from lightomni_ros.tools.milvus_server import MilvusServer
    certs = _certs(tmp_path / 'certs')
    tls = {'mode': '1', 'server_pem': str(certs / 'server.pem'), 'server_key': str(certs / 'server.key'),
           'ca_pem': str(certs / 'ca.pem')}
    with MilvusServer(tmp_path / 'tls', tls=tls) as srv:
        assert srv.uri.startswith('https://')
        wrong = robot(tmp_path, embedder, 'a', srv.uri, milvus_ca_pem=str(certs / 'other_ca.pem'),
                      milvus_server_name='localhost', milvus_timeout_s=3.0)
        assert not wrong.sync().connected            # a certificate the given CA did not sign is refused
        wrong.close()
        good = robot(tmp_path, embedder, 'b', srv.uri, milvus_ca_pem=str(certs / 'ca.pem'),
                     milvus_server_name='localhost', milvus_timeout_s=5.0)
        good.remember('the spa opens at nine')
        rep = good.sync()
        assert rep.connected and rep.backlog == 0, rep
        good.close()
