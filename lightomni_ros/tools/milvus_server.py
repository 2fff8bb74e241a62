# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""A real Milvus standalone server on this machine, from the PyPI package ``milvus`` (tests, benchmarks, trials).

The package ships Milvus 2.3's standalone binary (embedded etcd, local storage, RocksMQ) compressed; it is unpacked
once into the cache folder and each server gets its own data folder and free ports. The binary locks
``/run/milvus/standalone.pid`` (it ignores ``MILVUS_RUN_DIR``), so a second server on one machine panics: where the
process may create a mount namespace (root, as on CI), each server gets a private ``/run/milvus``; elsewhere only one
runs at a time. Production fleets run Milvus standalone or a cluster instead (docs/FLEET.md); the client is the same.
"""

from __future__ import annotations

import hashlib
import lzma
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import time
import urllib.request
from typing import Any

from ..core.models import cache_dir

_TOKEN = re.compile(r'\{\{\s*(\w+)\s*(?:\(\w+\))?\s*(?::\s*([^}]*?))?\s*\}\}')
_PANIC = re.compile(rb'^panic:', re.M)
_PORTS = ('etcd_port', 'root_coord_port', 'proxy_port', 'proxy_internal_port', 'query_coord_port',
          'query_node_port', 'index_coord_port', 'index_node_port', 'data_coord_port', 'data_node_port')


def package_dir() -> pathlib.Path:
    """Folder of the installed ``milvus`` package (ImportError when it is not installed)."""
    import milvus
    return pathlib.Path(milvus.__file__).parent


def binaries() -> pathlib.Path:
    """The unpacked server binary and libraries (unpacked on first use, checked by size and SHA-256 prefix)."""
    import milvus
    src = package_dir() / 'data' / 'bin'
    out = cache_dir() / f'milvus-server-{milvus.__version__}' / 'bin'
    out.mkdir(parents=True, exist_ok=True)
    for packed in sorted(src.glob('*.lzma')):
        target = out / packed.name[:-len('.lzma')]
        stamp = out / (target.name + '.src')
        digest = f'{packed.stat().st_size}:{hashlib.sha256(packed.read_bytes()[:1 << 20]).hexdigest()}'
        if target.exists() and stamp.exists() and stamp.read_text() == digest:
            continue
        tmp = target.with_name(target.name + '.tmp')
        with lzma.open(packed) as f_in, open(tmp, 'wb') as f_out:
            while chunk := f_in.read(1 << 22):
                f_out.write(chunk)
        tmp.chmod(0o755)
        tmp.replace(target)
        stamp.write_text(digest)
    return out


def private_run_dir_supported() -> bool:
    """Whether ``unshare -m`` can give a process its own ``/run/milvus`` here."""
    try:
        return subprocess.run(['unshare', '-m', 'sh', '-c', 'mount -t tmpfs tmpfs /mnt'], capture_output=True,
                              timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def free_port() -> int:
    """A TCP port nothing listens on now."""
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return int(s.getsockname()[1])


class MilvusServer:
    """One Milvus standalone process with its own data folder; restartable on the same ports and data."""

    def __init__(self, data_dir: str | os.PathLike, *, port: int = 0, session_ttl_s: int = 5,
                 authorization: bool = False, tls: dict[str, str] | None = None) -> None:
        self.base = pathlib.Path(data_dir).resolve()
        self.session_ttl_s = session_ttl_s
        self.authorization = authorization
        self.tls = tls or {}
        self._fixed_port = port
        self._pick_ports()
        self._started = False
        self.proc: subprocess.Popen | None = None
        self._log: Any = None

    def _pick_ports(self, keep_etcd: bool = False) -> None:
        """Free ports for every component; ``keep_etcd`` keeps the embedded etcd's (its data knows them)."""
        etcd = self.ports['etcd_port'] if keep_etcd else None
        self.ports = {name: free_port() for name in _PORTS}
        if self._fixed_port:
            self.ports['proxy_port'] = self._fixed_port
        self.metrics_port = free_port()
        if etcd is not None:
            self.ports['etcd_port'] = etcd
        else:
            self.etcd_peer_port = free_port()

    @property
    def port(self) -> int:
        """The client port."""
        return self.ports['proxy_port']

    @property
    def uri(self) -> str:
        """What a client connects to."""
        return f'{"https" if self.tls else "http"}://127.0.0.1:{self.port}'

    def _config(self) -> str:
        text = (package_dir() / 'data' / 'config.yaml.template').read_text()
        logs, data = self.base / 'logs', self.base / 'data'
        values: dict[str, Any] = dict(self.ports)
        values.update(etcd_log_level='warn', etcd_log_path=str(logs / 'etcd.log'), system_log_path=str(logs),
                      etcd_data_dir=str(data / 'etcd.data'), local_storage_dir=str(data),
                      rocksmq_data_dir=str(data / 'rocksmq'), authorization_enabled=self.authorization,
                      tls_mode=int(self.tls.get('mode', 0)), server_pem_path=self.tls.get('server_pem', 'server.pem'),
                      server_key_path=self.tls.get('server_key', 'server.key'),
                      ca_pem_path=self.tls.get('ca_pem', 'ca.pem'))

        def sub(m: re.Match) -> str:
            v = values.get(m.group(1), m.group(2))
            return ('true' if v else 'false') if isinstance(v, bool) else str(v)
        text = _TOKEN.sub(sub, text)
        # the embedded etcd's own ports (fixed at 2379/2380 otherwise: a second server could not start)
        etcd = self.base / 'configs' / 'etcd.yaml'
        client, peer = f'http://127.0.0.1:{self.ports["etcd_port"]}', f'http://127.0.0.1:{self.etcd_peer_port}'
        etcd.write_text(f'name: default\nlisten-client-urls: {client}\nadvertise-client-urls: {client}\n'
                        f'listen-peer-urls: {peer}\ninitial-advertise-peer-urls: {peer}\n'
                        f'initial-cluster: default={peer}\n')
        text = text.replace('    embed: true', f'    embed: true\n  config:\n    path: {etcd}', 1)
        # a killed server's session must expire before a restarted one is served (default 30 s)
        return re.sub(r'(\n\s+ttl:) 30\b', rf'\1 {int(self.session_ttl_s)}', text)

    def start(self, timeout_s: float = 300.0, attempts: int = 3) -> 'MilvusServer':
        """Start the process and wait until it reports healthy (RuntimeError with its log tail otherwise).

        A free port can be taken by another process between its choice and Milvus binding it; on a first start the
        server then gets new ports and another try (up to ``attempts``). A restart keeps its ports: clients know them.
        """
        log = self.base / 'logs' / 'server.log'
        fresh = not (self.base / 'data').exists()
        left = attempts
        while True:
            offset = log.stat().st_size if log.exists() else 0
            left -= 1
            try:
                return self._start(timeout_s)
            except RuntimeError:
                taken = b'address already in use' in self._log_since(offset)
                if self._started or not taken or left <= 0:
                    raise
                self.stop()
                if fresh:
                    # the embedded etcd wrote its member (with the old peer port) before the failure: started again
                    # on new ports it never elects a leader and the server hangs (seen on CI); nothing is stored yet
                    shutil.rmtree(self.base / 'data', ignore_errors=True)
                self._pick_ports(keep_etcd=not fresh)

    def _start(self, timeout_s: float) -> 'MilvusServer':
        bin_dir = binaries()
        for sub in ('configs', 'logs', 'data', 'run'):
            (self.base / sub).mkdir(parents=True, exist_ok=True)
        (self.base / 'configs' / 'milvus.yaml').write_text(self._config())
        (self.base / 'configs' / 'glog.conf').write_text((package_dir() / 'data' / 'glog.conf').read_text())
        env = dict(os.environ, DEPLOY_MODE='STANDALONE', METRICS_PORT=str(self.metrics_port),
                   MILVUS_RUN_DIR=str(self.base / 'run'), MILVUSCONF=str(self.base / 'configs'),
                   LD_LIBRARY_PATH=f'{bin_dir}:{os.environ.get("LD_LIBRARY_PATH", "")}')
        self._log = open(self.base / 'logs' / 'server.log', 'ab')
        offset = self._log.tell()
        cmd = [str(bin_dir / 'milvus'), 'run', 'standalone']
        if private_run_dir_supported():
            cmd = ['unshare', '-m', 'sh', '-c', 'mkdir -p /run/milvus && mount -t tmpfs tmpfs /run/milvus && '
                   'exec "$0" run standalone', cmd[0]]
        self.proc = subprocess.Popen(cmd, cwd=str(self.base), env=env,
                                     stdout=self._log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        deadline = time.monotonic() + timeout_s
        try:
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    raise RuntimeError(f'Milvus exited with {self.proc.returncode}: {self.log_tail()}')
                if self.healthy():
                    self._started = True
                    return self
                if self._failed_since(offset):
                    # a component that cannot bind or panics does not always take the process down
                    raise RuntimeError(f'Milvus failed while starting: {self.log_tail()}')
                time.sleep(0.2)
            raise RuntimeError(f'Milvus not healthy after {timeout_s:g} s: {self.log_tail()}')
        except BaseException:
            self.stop()         # no server left running behind a failed start (or an interrupted one)
            raise

    def healthy(self) -> bool:
        """Whether the server answers its health check."""
        try:
            with urllib.request.urlopen(f'http://127.0.0.1:{self.metrics_port}/healthz', timeout=2) as r:
                return b'OK' in r.read()
        except OSError:
            return False

    def _log_since(self, offset: int) -> bytes:
        """What the server wrote to its log after ``offset`` bytes (b'' when there is no log)."""
        try:
            with open(self.base / 'logs' / 'server.log', 'rb') as f:
                f.seek(offset)
                return f.read()
        except OSError:
            return b''

    def _failed_since(self, offset: int) -> bool:
        """Whether the log written since ``offset`` shows a port it could not bind or a Go panic."""
        text = self._log_since(offset)
        return b'address already in use' in text or _PANIC.search(text) is not None

    def log_tail(self, n: int = 2000) -> str:
        """The end of the server's output."""
        path = self.base / 'logs' / 'server.log'
        return path.read_text(errors='replace')[-n:] if path.exists() else ''

    def kill(self) -> None:
        """SIGKILL, as a crash or a power cut would (data written before stays)."""
        self._end(signal.SIGKILL)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s."""
        self._end(signal.SIGTERM)

    def _end(self, sig: int) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, sig)
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        except ProcessLookupError:
            pass
        self.proc = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> 'MilvusServer':
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


__all__ = ['MilvusServer', 'binaries', 'free_port']
