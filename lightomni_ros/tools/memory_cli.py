# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""``lightomni memory``: move a robot's memory between the embedded store and a fleet's Milvus; run a trial server.

    lightomni memory migrate --to milvus URI  [--from DIR] --robot-id R [--fleet-id F]
    lightomni memory migrate --to local DIR   --from URI   --robot-id R [--fleet-id F]
    lightomni memory serve --data DIR        (a Milvus standalone server from the PyPI package, until Ctrl-C)

Credentials come from ``--token-env`` (the name of an environment variable, default LIGHTOMNI_MILVUS_TOKEN), never
from the command line (it would show in ``ps`` and shell history). Exit code 0 only when every table verified.
"""

from __future__ import annotations

import argparse
import os
import signal
import threading

DEFAULT_DIR = '~/.local/share/lightomni_ros/memory'


def register(sub: argparse._SubParsersAction) -> None:
    """Add the ``memory`` verb."""
    p = sub.add_parser('memory', help='migrate memory to or from a fleet\'s Milvus; run a trial Milvus server',
                       description=__doc__.split('\n\n')[0])
    verbs = p.add_subparsers(dest='memory_verb', metavar='ACTION', required=True)
    m = verbs.add_parser('migrate', help='copy a store to Milvus (--to milvus URI) or from it (--to local DIR); '
                                         'resumable, verified by counts and checksums')
    m.add_argument('--to', nargs=2, metavar=('KIND', 'TARGET'), required=True,
                   help='"milvus URI" or "local DIR"')
    m.add_argument('--from', dest='source', default='',
                   help=f'source: a memory folder (to milvus; default {DEFAULT_DIR}) or a Milvus URI (to local)')
    m.add_argument('--robot-id', required=True, help='the robot whose memory moves (memory.robot_id)')
    m.add_argument('--fleet-id', default='default', help='memory.fleet_id')
    m.add_argument('--token-env', default='LIGHTOMNI_MILVUS_TOKEN', help='environment variable holding the token')
    m.add_argument('--ca-pem', default='', help='TLS: CA certificate of the server')
    m.add_argument('--client-pem', default='', help='mutual TLS: client certificate')
    m.add_argument('--client-key', default='', help='mutual TLS: client key')
    m.add_argument('--no-progress', action='store_true', help='no progress bars')
    m.set_defaults(func=run_migrate)
    s = verbs.add_parser('serve', help='run a Milvus standalone server here (trials and tests; not for production)')
    s.add_argument('--data', required=True, help='data folder (kept between runs)')
    s.add_argument('--port', type=int, default=19530, help='client port')
    s.set_defaults(func=run_serve)


def run_migrate(args: argparse.Namespace) -> int:
    """Migrate, print the verification table; 0 when every table verified."""
    from ..core.memory.config import MemoryConfig
    from ..core.memory.migration import to_local, to_milvus

    kind, target = args.to
    if kind not in ('milvus', 'local'):
        raise SystemExit('--to takes "milvus URI" or "local DIR"')
    uri = target if kind == 'milvus' else args.source
    if not uri:
        raise SystemExit('--to local needs --from URI (the fleet\'s Milvus)')
    cfg = MemoryConfig(backend='milvus', milvus_uri=uri, robot_id=args.robot_id, fleet_id=args.fleet_id,
                       milvus_token=os.environ.get(args.token_env, ''), milvus_ca_pem=args.ca_pem,
                       milvus_client_pem=args.client_pem, milvus_client_key=args.client_key, milvus_timeout_s=60.0)
    cfg.check()
    if kind == 'milvus':
        report = to_milvus(os.path.expanduser(args.source or DEFAULT_DIR), cfg, progress=not args.no_progress)
    else:
        report = to_local(target, cfg, progress=not args.no_progress)
    print(f'{"table":<10} {"copied":>8} {"source":>8} {"target":>8}  checksum')
    for c in report.checks:
        same = 'same' if c.source_sha256 == c.target_sha256 else 'DIFFERENT'
        print(f'{c.table:<10} {report.copied.get(c.table, 0):>8} {c.source_rows:>8} {c.target_rows:>8}  '
              f'{same} ({c.target_sha256[:16]})')
    print('verified' if report.ok else 'NOT verified: run the same command again to resume')
    return 0 if report.ok else 1


def run_serve(args: argparse.Namespace) -> int:
    """Run a server until Ctrl-C."""
    from .milvus_server import MilvusServer

    server = MilvusServer(args.data, port=args.port).start()
    print(f'Milvus standalone at {server.uri} (data {server.base}); Ctrl-C stops it', flush=True)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        while not stop.wait(1.0):
            if server.proc is not None and server.proc.poll() is not None:
                print(f'the server exited: {server.log_tail()}')
                return 1
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
    return 0
