# Copyright 2026 lightomni_ros contributors
# SPDX-License-Identifier: Apache-2.0
"""Every command in README.md and docs/*.md runs as written, from the repository root and from another folder.

Commands are the lines of the shell code blocks (indented, or fenced without a language or with a shell one) whose
first word is a command. Each block runs in a fresh temporary folder, line after line with a time-out, twice:

- "root": a folder that mirrors the checkout (a link to each of its top-level entries), so repository-relative paths
  work as written and outputs stay out of the checkout;
- "elsewhere": an empty folder; paths into the checkout become absolute and ``make`` becomes ``make -C <checkout>``.

The environment is a fresh shell's: no AMENT_PREFIX_PATH, no DDS profile, no PYTHONPATH, a temporary HOME (the
graph's memory and logs), the test's ROS domain. A block that uses ``lightomni`` bare without its own
``source .venv/bin/activate`` runs after that activation, which the README names as the assumption of such commands.

Long commands run a small variant (:data:`SMALL`, each with why it is honest; those in :data:`ONCE_ELSEWHERE` from the
other folder only); a long command that is new to the docs fails :func:`test_every_documented_command_is_known` with
what to add. Blocks of commands that start their own nodes on a domain of their own (:data:`OWN_DOMAIN`) run on a
second thread beside the others. Commands for a robot with ROS 2 (apt, colcon, rosdep, ros2 launch) cannot run
here: :data:`NOT_HERE` gives the reason, and the files they name are checked.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import os
import pathlib
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from typing import Callable

import pytest
import yaml

from harness import REPO, wait_for

from lightomni_ros.core.models import cache_dir
from lightomni_ros.launch_runner.lifecycle import LifecycleClient

DOCS = ['README.md'] + sorted(f'docs/{p.name}' for p in (REPO / 'docs').glob('*.md'))
SHELL_FENCES = {'', 'sh', 'bash', 'shell', 'console'}
COMMAND_WORDS = {'make', 'lightomni', 'python', 'python3', 'source', 'cd', 'git', 'colcon', 'rosdep', 'ros2', 'pip',
                 'sudo', 'apt', 'apt-get', 'export', 'sha256sum', 'bash'}
#: a command for a robot with ROS 2 installed (only there): its line must be in NOT_HERE
ROBOT_WORDS = re.compile(r'\b(ros2|colcon|rosdep|apt|apt-get|sudo)\b|~/ws|git clone|requirements/robot\.txt')
#: commands that run long (the graph, benchmarks, training, the suite itself): each needs a SMALL variant
LONG = [re.compile(p) for p in (r'^make (demo|train|test)\b', r'(^|/)lightomni (demo|train|bench|eval)\b',
                                r'(^|/)lightomni replay (?!--score-only)')]
#: commands that serve until Ctrl-C: started in the background, used by the others, stopped with SIGINT
SERVERS = [re.compile(r'(^|/)lightomni launch\b')]
#: commands that start their own nodes on a domain of their own (neither the graph nor the test's domain): their
#: blocks run beside the others, on a second thread, since most of their time is audio streamed at 1x
OWN_DOMAIN = [re.compile(r'(^|/)lightomni bench (perception|hearing)\b')]
SMALL_SCENARIO = 'test/docs/small_scenario.yaml'
#: the one graph each run uses: started by README's `lightomni launch` (one model load instead of one per command);
#: the replaying commands go into it with --no-launch and do not wait for its sleep-time work (its answers and memory
#: are test_graph.py's to check; here, that each command does its job: bag, replay, record, score, report)
INTO_GRAPH = '--no-launch --linger 0'

#: documented command -> (small variant, why it is honest); ``{here}`` is the block's folder
SMALL: dict[str, tuple[str, str]] = {
    'make demo': (
        f'make demo DEMO_ARGS="--scenario {SMALL_SCENARIO} -o {{here}}/demo_out {INTO_GRAPH}"',
        'the same make target and demo verb (bag, replay, scoring, report) on a 10 s scenario, into the graph that '
        "README's `lightomni launch` started; the 165 s sample with its own graph is `make demo` itself, run and "
        'reported by hand for the README (too long to run twice per suite)'),
    'make test': (
        'make test PYTEST_ARGS="test/test_config.py -q"',
        'the same target (set-up, then pytest) on one test file: the suite cannot run itself'),
    'lightomni demo': (
        f'lightomni demo --scenario {SMALL_SCENARIO} -o demo_out {INTO_GRAPH}',
        'as `make demo` above'),
    'lightomni replay sample_bag -o sample_run': (
        f'lightomni bag {SMALL_SCENARIO} -o small_bag && lightomni replay small_bag -o sample_run {INTO_GRAPH}',
        'a 10 s bag instead of the 165 s sample, into the running graph; `lightomni replay` launching the graph '
        'itself, from a temporary folder with nothing in the environment, is test_graph.py'),
    'lightomni replay robot_bag --no-launch --remap /cam/image:=/camera/image_raw -r 2': (
        'lightomni replay robot_bag --no-launch --remap /cam/image:=/camera/image_raw -r 2',
        'as written; robot_bag is a 3 s recording of a camera on /cam/image that the test writes (the stand-in for '
        "a robot's bag)"),
    'lightomni bench perception --json perception.json': (
        'lightomni bench perception --quick --json perception.json',
        'the same benchmark on two clips for 10 s (--quick); the full figures in docs/PERCEPTION.md are measured by '
        'hand'),
    'lightomni bench hearing --json hearing.json': (
        'lightomni bench hearing --quick --hearing-splits dev --hearing-models= --json hearing.json',
        'the same benchmark as a smoke run (--quick, the dev split alone: short conversations and the meeting clip) '
        'without the offline model comparison; the figures in README.md and docs/PERCEPTION.md are measured by hand '
        'with the full run'),
    'lightomni bench live --json live.json': (
        'lightomni bench live --quick --live-minutes 0.5 --live-horizons 1day --live-entries 2000 --json live.json',
        'the same benchmark (scenario from the shared media and TTS, its own launched graph on a pre-filled memory, '
        'replay at 1x, drain, figures, plot) on 30 s of conversation and the 1-day horizon; the 20-minute run at '
        'both horizons is measured by hand for the README'),
}


#: SMALL commands that run once, from another folder only: each launches its own graph for minutes, and what running
#: from the checkout would add (outputs relative to the working folder, checkout paths) every other command proves
ONCE_ELSEWHERE: dict[str, str] = {
    'lightomni bench hearing --json hearing.json': 'its own perception graph per conversation (about 2 minutes)',
    'lightomni bench live --json live.json': 'its own launched graph, memory pre-fill and drain (about 3 minutes)',
}


def _launch_declares_models_dir() -> bool:
    return "DeclareLaunchArgument('models_dir'" in (REPO / 'launch' / 'lightomni.launch.py').read_text()


def _pinned(path: pathlib.Path) -> bool:
    lines = [ln.split('#')[0].strip() for ln in path.read_text().splitlines()]
    return all('==' in ln for ln in lines if ln and not ln.startswith('-'))


def _package_name() -> str:
    from catkin_pkg.package import parse_package
    return parse_package(str(REPO / 'package.xml')).name


#: pattern of a robot command -> (why it cannot run here, what is checked instead)
NOT_HERE: dict[str, tuple[str, Callable[[], bool]]] = {
    r'git clone <this repository> lightomni_ros': (
        'clones into a ROS 2 workspace (~/ws) that this machine does not have',
        lambda: _package_name() == 'lightomni_ros'),
    r'pip install -r lightomni_ros/requirements/robot\.txt': (
        "installs the ML stack into a robot's system Python",
        lambda: _pinned(REPO / 'requirements' / 'robot.txt')),
    r'rosdep install --from-paths src': (
        'needs rosdep and the ROS apt repositories',
        lambda: (REPO / 'package.xml').is_file() and '<exec_depend>' in (REPO / 'package.xml').read_text()),
    r'colcon build --packages-select lightomni_ros && source install/setup\.bash': (
        'needs colcon and a sourced ROS 2 (the same CMake build is test_package.py::test_colcon_style_install_layout)',
        lambda: 'project(lightomni_ros)' in (REPO / 'CMakeLists.txt').read_text()),
    r'ros2 launch lightomni_ros lightomni\.launch\.py models_dir:=': (
        'needs ros2launch (not on PyPI); `lightomni launch` runs the same file here',
        _launch_declares_models_dir),
    r'ros2 launch lightomni_ros fleet\.launch\.py robot_id:=': (
        "needs ros2launch and the fleet's Milvus server; test_fleet_graph.py runs a fleet graph on a Milvus server "
        'it starts',
        lambda: "DeclareLaunchArgument('robot_id'" in (REPO / 'launch' / 'fleet.launch.py').read_text()),
    r'lightomni memory migrate --to (milvus|local) ': (
        "needs the fleet's Milvus server at milvus.hotel.lan; test_memory_fleet.py migrates both ways (with an "
        'interruption and a resume)',
        lambda: "'migrate'" in (REPO / 'lightomni_ros' / 'tools' / 'memory_cli.py').read_text()),
}
#: commands whose exit status 1 is a documented outcome, not a failure: a probe failed (make reports it as 2)
PROBE_EXIT = re.compile(r'(^|/)lightomni (demo|replay)\b|^make demo\b')


@dataclasses.dataclass(frozen=True)
class Documented:
    """One command line of the docs."""

    doc: str
    line: int
    block: int
    text: str

    @property
    def command(self) -> str:
        """The line without its comment, spaces normalised (the key of the tables)."""
        return ' '.join(shlex.split(self.text, comments=True))

    def __str__(self) -> str:
        return f'{self.doc}:{self.line}: `{self.command}`'


def _is_command(line: str) -> bool:
    words = shlex.split(line, comments=True) if line.strip() else []
    if not words:
        return False
    first = words[0]
    return first in COMMAND_WORDS or first.startswith(('./', '.venv/')) or \
        ('/' not in first and ':' not in first and shutil.which(first) is not None)


def documented_commands() -> list[Documented]:
    """Every command line of the shell code blocks of README.md and docs/*.md, in order."""
    out: list[Documented] = []
    for doc in DOCS:
        lines = (REPO / doc).read_text().splitlines()
        blocks: list[list[tuple[int, str]]] = []
        fence: str | None = None
        current: list[tuple[int, str]] = []
        previous_blank = True
        for number, raw in enumerate(lines, 1):
            stripped = raw.strip()
            if stripped.startswith('```'):
                if fence is None:
                    fence = stripped[3:].strip().lower()
                    current = []
                else:
                    if fence in SHELL_FENCES:
                        blocks.append(current)
                    fence = None
                continue
            if fence is not None:
                current.append((number, raw))
            elif raw.startswith('    ') and (previous_blank or current):
                current.append((number, raw[4:]))
            elif current:
                blocks.append(current)
                current = []
            previous_blank = not stripped
        if current and fence is None:
            blocks.append(current)
        for index, block in enumerate(blocks):
            body = [(n, ln.removeprefix('$ ')) for n, ln in block if ln.strip() and not ln.strip().startswith('#')]
            joined: list[tuple[int, str]] = []
            for n, ln in body:      # a line ending in a backslash continues on the next one
                if joined and joined[-1][1].rstrip().endswith('\\'):
                    joined[-1] = (joined[-1][0], joined[-1][1].rstrip()[:-1].rstrip() + ' ' + ln.strip())
                else:
                    joined.append((n, ln))
            body = joined
            if body and _is_command(body[0][1]):
                out += [Documented(doc, n, index, ln.strip()) for n, ln in body]
    return out


def _long(cmd: str) -> re.Pattern | None:
    return next((p for p in LONG if p.search(cmd)), None)


def _not_here(cmd: str) -> tuple[str, Callable[[], bool]] | None:
    return next((v for k, v in NOT_HERE.items() if re.search(k, cmd)), None)


def test_every_documented_command_is_known() -> None:
    """Robot-only commands have a reason; long ones a small variant; the tables hold no stale entries."""
    commands = documented_commands()
    assert len(commands) >= 12, [str(c) for c in commands]
    problems = []
    for c in commands:
        cmd = c.command
        if ROBOT_WORDS.search(cmd) and not _not_here(cmd):
            problems.append(f'{c} needs a robot with ROS 2: add NOT_HERE[{re.escape(cmd)!r}] = (why it cannot run '
                            'here, a check of the files it names) to test/test_docs.py')
        elif _long(cmd) and cmd not in SMALL and not any(p.search(cmd) for p in SERVERS) and not _not_here(cmd):
            problems.append(f'{c} runs long (matches {_long(cmd).pattern!r}): add SMALL[{cmd!r}] = (a small variant, '
                            'why it is honest and how the full one is covered) to test/test_docs.py')
    documented = {c.command for c in commands}
    problems += [f'SMALL[{k!r}] is not in the docs any more: remove it' for k in SMALL if k not in documented]
    problems += [f'ONCE_ELSEWHERE[{k!r}] has no SMALL variant: remove it' for k in ONCE_ELSEWHERE if k not in SMALL]
    problems += [f'NOT_HERE[{k!r}] matches no documented command: remove it' for k in NOT_HERE
                 if not any(re.search(k, c) for c in documented)]
    assert not problems, '\n'.join(problems)


def test_commands_that_cannot_run_here_name_files_that_exist() -> None:
    """What the robot-only commands rely on is in the checkout (package name, pinned requirements, launch file...)."""
    for c in documented_commands():
        found = _not_here(c.command)
        if found:
            reason, check = found
            assert check(), f'{c}: not runnable here ({reason}), and its check failed'


# --- running them ----------------------------------------------------------------------------------------------------
def _mirror(root: pathlib.Path) -> pathlib.Path:
    """A folder that looks like the checkout: a link to each top-level entry."""
    root.mkdir(parents=True)
    for entry in REPO.iterdir():
        if entry.name not in ('.git', 'build', 'out'):
            (root / entry.name).symlink_to(entry)
    return root


def _tokens(cmd: str) -> list[str]:
    lex = shlex.shlex(cmd, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    lex.commenters = '#'
    return list(lex)


def elsewhere(cmd: str) -> str:
    """``cmd`` for a folder outside the checkout: repository paths absolute, ``make -C <checkout>``."""
    out: list[str] = []
    start, make_args = True, False

    def absolute(word: str) -> str:
        # a path names a folder or file (not a verb such as `launch`, which is also a folder of the checkout)
        looks_like_path = '/' in word or '.' in word
        if not looks_like_path or word.startswith(('-', '/', '~')) or not (REPO / word).exists():
            return word
        return str(REPO / word)

    for tok in _tokens(cmd):
        if set(tok) <= set('();<>|&'):   # an operator or a redirection: as written
            out.append(tok)
            start, make_args = tok not in ('>', '>>', '<', '2>'), False
            continue
        if start and tok == 'make':
            out += ['make', '-C', shlex.quote(str(REPO))]
            start, make_args = False, True
            continue
        start = False
        if make_args and '=' not in tok and not tok.startswith('-'):
            out.append(shlex.quote(tok))   # a make target, not a path
            continue
        if '=' in tok and not tok.startswith('-'):
            name, _, value = tok.partition(':=' if ':=' in tok else '=')
            sep = ':=' if ':=' in tok else '='
            tok = name + sep + ' '.join(absolute(w) for w in value.split(' '))
        else:
            tok = absolute(tok)
        out.append(shlex.quote(tok))
    return ' '.join(out)


def _robot_bag(folder: pathlib.Path) -> None:
    """A 3 s recording of a camera on /cam/image (rgb8, 5 fps): a robot's bag, for the documented remap."""
    import numpy as np
    from rclpy.serialization import serialize_message
    from rosbags.rosbag2 import StoragePlugin, Writer
    from sensor_msgs.msg import Image

    from lightomni_ros.eval import rostypes

    with Writer(folder / 'robot_bag', version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        conn = writer.add_connection('/cam/image', 'sensor_msgs/msg/Image', typestore=rostypes.typestore())
        rng = np.random.default_rng(0)
        for i in range(15):
            t = 1_000_000_000_000 + i * 200_000_000
            img = Image(height=120, width=160, encoding='rgb8', step=480)
            img.header.stamp.sec, img.header.stamp.nanosec = divmod(t, 1_000_000_000)
            img.data = rng.integers(0, 255, (120, 160, 3), dtype=np.uint8).tobytes()
            writer.write(conn, t, serialize_message(img))


#: inputs a documented command expects in its folder (written by the test)
SETUP: dict[str, Callable[[pathlib.Path], None]] = {
    'lightomni replay robot_bag --no-launch --remap /cam/image:=/camera/image_raw -r 2': _robot_bag,
}


class Shell:
    """Runs documented lines one after the other, keeping what ``source`` changes in the environment."""

    def __init__(self, env: dict[str, str], folder: pathlib.Path, log: list[str]) -> None:
        self.env = dict(env)
        self.folder = folder
        self.log = log

    def activate(self) -> None:
        """What `source .venv/bin/activate` does, for blocks that assume it."""
        self.source(f'source {shlex.quote(str(REPO / ".venv" / "bin" / "activate"))}')

    def source(self, line: str) -> None:
        """Run a ``source`` line and keep the environment it leaves."""
        res = subprocess.run(['bash', '-c', f'{line} >/dev/null && env -0'], cwd=self.folder, env=self.env,
                             capture_output=True, timeout=60)
        assert res.returncode == 0, f'{line}: {res.stderr.decode()[-2000:]}'
        self.env = dict(item.split('=', 1) for item in res.stdout.decode().split('\0') if '=' in item)

    def run(self, doc: Documented, line: str, timeout: float = 900.0) -> None:
        """Run one line; fail with its output unless it exits 0 (or 1 where a failed probe is documented)."""
        for key, prepare in SETUP.items():
            if doc.command == key:
                prepare(self.folder)
        if line.split()[0] == 'source':
            self.source(line)
            self.log.append(f'ok  {doc}  ({self.folder.name})')
            return
        if re.match(r'lightomni\b', line) and not shutil.which('lightomni', path=self.env.get('PATH')):
            self.activate()
        t0 = time.monotonic()
        try:
            res = subprocess.run(['bash', '-c', line], cwd=self.folder, env=self.env, capture_output=True, text=True,
                                 timeout=timeout, start_new_session=True)
        except subprocess.TimeoutExpired as exc:
            raise AssertionError(f'{doc} ran past {timeout:g} s in {self.folder}: if it is long, add a small '
                                 f'variant to SMALL in test/test_docs.py\n{(exc.stdout or b"")[-3000:]}') from None
        allowed = ({0, 2} if doc.command.startswith('make') else {0, 1}) if PROBE_EXIT.search(doc.command) else {0}
        assert res.returncode in allowed, (f'{doc} (run as `{line}` in {self.folder}) exited {res.returncode}:\n'
                                           f'{res.stdout[-3000:]}\n{res.stderr[-3000:]}')
        if PROBE_EXIT.search(doc.command) and '--score-only' not in line:
            assert 'probes passed' in res.stdout or 'nothing scored' in res.stdout, res.stdout[-3000:]
        self.log.append(f'ok  {doc}  ({self.folder.parent.name}: `{line}`, exit {res.returncode}, '
                        f'{time.monotonic() - t0:.0f} s)')


class Server:
    """A documented command that serves until Ctrl-C (``lightomni launch``)."""

    def __init__(self, doc: Documented, line: str, env: dict[str, str], folder: pathlib.Path) -> None:
        self.doc, self.line = doc, line
        self.out = folder / 'server.log'
        self._file = self.out.open('w')
        self.proc = subprocess.Popen(['bash', '-c', line], cwd=folder, env=env, stdout=self._file,
                                     stderr=subprocess.STDOUT, start_new_session=True)

    def wait_states(self, want: str, timeout: float) -> None:
        """Wait until perception, reflex and consolidation are each in state ``want``."""
        nodes = [f'/lightomni/{n}' for n in ('perception', 'reflex', 'consolidation')]
        with LifecycleClient() as client:
            def ready() -> bool:
                assert self.proc.poll() is None, f'{self.doc} exited {self.proc.returncode}:\n{self.text()[-4000:]}'
                return all(client.get_state(n, timeout=2.0) == want for n in nodes)
            wait_for(ready, timeout, interval=1.0, what=f'{self.doc}: the three nodes {want}')

    def text(self) -> str:
        """Everything it printed."""
        if not self._file.closed:
            self._file.flush()
        return self.out.read_text(errors='replace')

    def stop(self) -> None:
        """Ctrl-C (SIGINT to its process group, as a terminal sends it): a clean stop exits 0."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGINT)
        try:
            code = self.proc.wait(120)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
            self._file.close()
        assert code == 0 and 'all nodes stopped' in self.text(), \
            f'{self.doc}: Ctrl-C gave exit {code}:\n{self.text()[-4000:]}'


def fresh_shell_env(spawn, home: pathlib.Path) -> dict[str, str]:
    """A new shell's environment on the test's domain: nothing of the venv, the ament index or the DDS profile."""
    drop = ('AMENT_PREFIX_PATH', 'PYTHONPATH', 'FASTDDS_DEFAULT_PROFILES_FILE', 'FASTRTPS_DEFAULT_PROFILES_FILE',
            'FASTDDS_BUILTIN_TRANSPORTS', 'VIRTUAL_ENV', 'LIGHTOMNI_TEST_CPU_LOAD', '_ROS_WHEELS_BOOTSTRAP_COMPLETE',
            'LD_LIBRARY_PATH', 'PYTEST_CURRENT_TEST')
    env = {k: v for k, v in spawn.env().items() if k not in drop}
    venv_bin = str(pathlib.Path(sys.executable).parent)
    env['PATH'] = os.pathsep.join(p for p in env.get('PATH', '/usr/bin:/bin').split(os.pathsep) if p != venv_bin)
    # the graph's memory, perception state and logs go to this HOME; derived models stay in the shared cache
    env.update(HOME=str(home), LIGHTOMNI_CACHE=str(cache_dir()))
    return env


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_documented_commands_run_as_written(spawn, tmp_path: pathlib.Path) -> None:
    """Each command (or its small variant) exits 0 from a mirror of the checkout and from another folder."""
    commands = documented_commands()
    runnable = [c for c in commands if not _not_here(c.command)]
    # `make test` set up the venv before the suite; a direct pytest run may follow an edit of CMakeLists.txt or
    # setup.py: bring the venv up to date here, not halfway through a documented make command
    setup = subprocess.run(['make', '-C', str(REPO), 'setup'], capture_output=True, text=True, timeout=900)
    assert setup.returncode == 0, setup.stdout[-2000:] + setup.stderr[-2000:]
    env = fresh_shell_env(spawn, tmp_path / 'home')
    log: list[str] = []
    servers = [c for c in runnable if any(p.search(c.command) for p in SERVERS)]
    others = [c for c in runnable if c not in servers]
    assert servers, 'the docs no longer start a graph with `lightomni launch`; the replaying variants need one'

    def folder_for(mode: str, c: Documented) -> pathlib.Path:
        path = tmp_path / mode / f'{pathlib.Path(c.doc).stem}_{c.block}'
        if not path.exists():
            if mode == 'root':
                _mirror(path)
            else:
                path.mkdir(parents=True)
        return path

    def line_for(mode: str, c: Documented, folder: pathlib.Path) -> str:
        line = SMALL[c.command][0] if c.command in SMALL else c.text
        line = line.replace('{here}', str(folder))
        return line if mode == 'root' else elsewhere(line)

    # From the checkout: the graph as the README starts it, then every other command (the replays go into it)
    running = [Server(c, c.text, env, folder_for('root', c)) for c in servers]
    try:
        for server in running:
            server.wait_states('active', 900.0)
            log.append(f'ok  {server.doc}  (root: all nodes active)')
        shells: dict[pathlib.Path, Shell] = {}

        def run_all(commands: list[Documented]) -> None:
            for mode in ('root', 'elsewhere'):
                for c in commands:
                    if mode == 'root' and c.command in ONCE_ELSEWHERE:
                        log.append(f'ok  {c}  (root: run from the other folder only: {ONCE_ELSEWHERE[c.command]})')
                        continue
                    folder = folder_for(mode, c)
                    shell = shells.setdefault(folder, Shell(env, folder, log))
                    shell.run(c, line_for(mode, c, folder))

        # a block goes beside the others only whole (its lines share one shell and run in order)
        blocks = {(c.doc, c.block) for c in others if any(p.search(c.command) for p in OWN_DOMAIN)}
        blocks -= {(c.doc, c.block) for c in others if not any(p.search(c.command) for p in OWN_DOMAIN)}
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as beside:
            own = beside.submit(run_all, [c for c in others if (c.doc, c.block) in blocks])
            run_all([c for c in others if (c.doc, c.block) not in blocks])
            own.result()
    finally:
        for server in running:
            server.stop()
    # From another folder the launch itself: found, started, its nodes answer; loading the models again would add
    # minutes, so they stay unconfigured (autostart:=false); Ctrl-C stops them cleanly.
    for c in servers:
        folder = folder_for('elsewhere', c)
        server = Server(c, elsewhere(c.text) + ' autostart:=false', env, folder)
        try:
            server.wait_states('unconfigured', 300.0)
        finally:
            server.stop()
        log.append(f'ok  {c}  (elsewhere, autostart:=false: all nodes unconfigured, Ctrl-C exit 0)')
    print('\n'.join(log))
    assert len(log) == 2 * len(runnable)


def test_elsewhere_rewrites_only_checkout_paths() -> None:
    """Repository paths become absolute, make runs in the checkout, outputs and names stay as written."""
    got = elsewhere('lightomni bag sample/scenario.yaml -o sample_bag  # MCAP')
    assert got == f'lightomni bag {REPO}/sample/scenario.yaml -o sample_bag'
    got = shlex.split(elsewhere(f'make demo DEMO_ARGS="--scenario {SMALL_SCENARIO} -o /x/out"'))
    assert got == ['make', '-C', str(REPO), 'demo', f'DEMO_ARGS=--scenario {REPO}/{SMALL_SCENARIO} -o /x/out']
    assert elsewhere('make test') == f'make -C {shlex.quote(str(REPO))} test'
    got = elsewhere('.venv/bin/lightomni launch lightomni.launch.py camera_topic:=/camera/image_raw')
    assert got == f'{REPO}/.venv/bin/lightomni launch lightomni.launch.py camera_topic:=/camera/image_raw'
    chained = 'lightomni bag x.yaml -o b && lightomni replay b'
    assert elsewhere(chained) == chained
    assert elsewhere('lightomni doctor --json > doctor.json') == 'lightomni doctor --json > doctor.json'
    assert yaml.safe_load((REPO / SMALL_SCENARIO).read_text())['probes']
