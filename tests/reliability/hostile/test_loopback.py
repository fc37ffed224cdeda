"""AL5, issue 25 item 1: nothing leaves loopback, whatever the configuration or environment.

Each client gets the hostile inputs the tester used (``http_proxy``, a loopback server that
redirects elsewhere, ``redis://192.0.2.1``, a DSN with ``hostaddr=192.0.2.1`` beside
``host=127.0.0.1``, ``bolt://192.0.2.1``, Chroma/Qdrant URLs). Two witnesses, neither a mock of
the clients: the session's socket guard (tests/harness/netblock: patched ``socket`` methods
and the ``socket.connect`` audit hook) records every non-loopback attempt made from Python,
and a *trap* — a listener on this machine's own non-loopback address — catches a connection
made in C (libpq), which no Python hook sees.
"""

from __future__ import annotations

import fcntl
import http.server
import re
import socket
import struct
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from backends.errors import ConfigError, CustodiaEnvironmentError, ModelUnavailableError
from backends.net import (
    http_json,
    http_probe,
    loopback_bolt_uri,
    require_loopback,
    require_loopback_dsn,
)
from tests.harness import netblock

HOSTILE = "192.0.2.1"  # TEST-NET-1, the tester's address
SHOWN = re.escape(HOSTILE)


@pytest.fixture
def attempts() -> Iterator[list[tuple[str, object]]]:
    """The socket guard's record of non-loopback attempts, empty at the start of the test."""
    netblock.ATTEMPTS.clear()
    yield netblock.ATTEMPTS
    netblock.ATTEMPTS.clear()


def _local_non_loopback_ipv4() -> str | None:
    """An IPv4 address of one of this machine's own interfaces other than loopback (read
    with an ioctl, no packet sent)."""
    siocgifaddr = 0x8915
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _index, name in socket.if_nameindex():
            if name == "lo":
                continue
            try:
                request = struct.pack("256s", name[:15].encode())
                raw = fcntl.ioctl(probe.fileno(), siocgifaddr, request)
            except OSError:
                continue
            address = socket.inet_ntoa(raw[20:24])
            if not address.startswith("127."):
                return address
    return None


class Trap:
    """A listener on a non-loopback local address: ``caught()`` says whether anything
    connected (the kernel completes the handshake without an ``accept``)."""

    def __init__(self, host: str) -> None:
        self.host = host
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind((host, 0))
        self.sock.listen(8)
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]

    def caught(self) -> int:
        count = 0
        while True:
            try:
                conn, _ = self.sock.accept()
            except BlockingIOError:
                return count
            conn.close()
            count += 1


@pytest.fixture
def trap() -> Iterator[Trap]:
    host = _local_non_loopback_ipv4()
    if host is None:
        pytest.skip("this machine has no non-loopback IPv4 address to set a trap on")
    trap = Trap(host)
    try:
        yield trap
    finally:
        trap.sock.close()


class _Handler(http.server.BaseHTTPRequestHandler):
    redirect_to = ""

    def do_GET(self) -> None:
        if self.redirect_to:
            self.send_response(302)
            self.send_header("Location", self.redirect_to)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.do_GET()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def loopback_server() -> Iterator[tuple[http.server.HTTPServer, type[_Handler]]]:
    handler = type("Handler", (_Handler,), {"redirect_to": ""})
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server, handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def _url(server: http.server.HTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/"


def _proxies(monkeypatch: pytest.MonkeyPatch, proxy: str) -> None:
    for scheme in ("http", "https", "all"):
        monkeypatch.setenv(f"{scheme}_proxy", proxy)
        monkeypatch.setenv(f"{scheme.upper()}_PROXY", proxy)
    for name in ("no_proxy", "NO_PROXY"):
        monkeypatch.delenv(name, raising=False)


# -- HTTP (model runtimes, vector-server probes) -------------------------------------------


def test_http_ignores_the_environments_proxy(
    monkeypatch: pytest.MonkeyPatch, loopback_server: Any, attempts: list[Any]
) -> None:
    server, _ = loopback_server
    _proxies(monkeypatch, f"http://{HOSTILE}:3128")
    assert http_json(_url(server), None, timeout=5) == {"ok": True}
    assert http_probe(_url(server), timeout=5) == {"ok": True}
    assert attempts == []


def test_http_never_follows_a_redirect_beyond_loopback(
    loopback_server: Any, attempts: list[Any], trap: Trap
) -> None:
    server, handler = loopback_server
    for target in (f"http://{HOSTILE}:8080/x", f"http://{trap.host}:{trap.port}/x"):
        handler.redirect_to = target
        with pytest.raises(ModelUnavailableError, match="redirect") as err:
            http_json(_url(server), {"q": 1}, timeout=5)
        assert target in str(err.value)
        assert http_probe(_url(server), timeout=5) is None  # answered, but nothing followed
    assert attempts == []
    assert trap.caught() == 0


def test_http_refuses_a_name_that_resolves_beyond_loopback(attempts: list[Any]) -> None:
    with pytest.raises(ConfigError, match=SHOWN):
        http_json(f"http://{HOSTILE}:11434/api/tags", None, timeout=2)
    with pytest.raises(ConfigError, match=r"example\.invalid"):
        require_loopback("ollama_url", "http://models.example.invalid:11434")
    assert [a for a in attempts if a[0] != "getaddrinfo"] == []
    require_loopback("ollama_url", "http://localhost:11434")
    require_loopback("ollama_url", "http://[::1]:11434")


def test_the_chat_runtimes_refuse_before_any_socket(attempts: list[Any]) -> None:
    from backends.models.chat import OllamaChat, OpenAICompatibleChat

    for cls in (OllamaChat, OpenAICompatibleChat):
        with pytest.raises(ConfigError, match=SHOWN):
            cls("m", f"http://{HOSTILE}:11434", 2.0)
    assert attempts == []


# -- Redis ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        f"redis://{HOSTILE}:6379/0",
        f"redis://:6379/0?host={HOSTILE}",
        f"rediss://{HOSTILE}:6380",
        f"redis://{HOSTILE}/?path=x",  # a ?path= skipped the check (found by review)
    ],
)
def test_redis_refuses_a_host_beyond_loopback(url: str, attempts: list[Any]) -> None:
    from backends.stores.engines.redis import redis_client
    from backends.stores.ttl.redis import RedisTTLStore

    with pytest.raises(ConfigError, match=SHOWN):
        redis_client(url, 1.0)
    with pytest.raises(ConfigError, match=SHOWN):
        RedisTTLStore.from_url(url, 1.0)
    assert attempts == []


def test_redis_from_the_environment_is_refused_by_every_redis_store(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Any, attempts: list[Any]
) -> None:
    from backends.config import load
    from backends.stores.bus.redis import RedisEventBus
    from backends.stores.ttl.redis import RedisTTLStore

    monkeypatch.setenv("CUSTODIA_REDIS_URL", f"redis://{HOSTILE}:6379/0")
    config = load(home=tmp_path)
    for store in (RedisTTLStore, RedisEventBus):
        with pytest.raises(CustodiaEnvironmentError, match=SHOWN):
            store.from_config(config)
    assert attempts == []


# -- Postgres (libpq connects in C: the trap is the witness) -------------------------------


def test_postgres_refuses_a_hostaddr_beside_a_loopback_host(
    trap: Trap, attempts: list[Any]
) -> None:
    from backends.stores.audit_log.postgres import PostgresAuditLog

    for dsn in (
        f"host=127.0.0.1 hostaddr={trap.host} port={trap.port} dbname=x user=x",
        f"postgresql://x@127.0.0.1:{trap.port},{trap.host}:{trap.port}/x",
        f"postgresql://x@127.0.0.1:{trap.port}/x?hostaddr=127.0.0.1,{trap.host}",
    ):
        with pytest.raises(ConfigError, match=re.escape(trap.host)):
            PostgresAuditLog(dsn, timeout=2)
    assert trap.caught() == 0
    assert attempts == []
    with pytest.raises(ConfigError, match=SHOWN):
        require_loopback_dsn("postgres_dsn", f"host=127.0.0.1 hostaddr={HOSTILE} dbname=x")


def test_postgres_reads_the_libpq_environment_too(
    monkeypatch: pytest.MonkeyPatch, trap: Trap
) -> None:
    from backends.stores.audit_log.postgres import PostgresAuditLog

    monkeypatch.setenv("PGHOSTADDR", trap.host)
    monkeypatch.setenv("PGPORT", str(trap.port))
    with pytest.raises(ConfigError, match=re.escape(trap.host)):
        PostgresAuditLog("dbname=x user=x", timeout=2)
    monkeypatch.delenv("PGHOSTADDR")
    monkeypatch.setenv("PGHOST", trap.host)
    with pytest.raises(ConfigError, match=re.escape(trap.host)):
        PostgresAuditLog("dbname=x user=x", timeout=2)
    monkeypatch.delenv("PGHOST")
    monkeypatch.setenv("PGSERVICE", "custodia")
    with pytest.raises(ConfigError, match="service"):
        PostgresAuditLog("dbname=x user=x", timeout=2)
    assert trap.caught() == 0


def test_postgres_refuses_a_service_file_and_keeps_unix_sockets() -> None:
    with pytest.raises(ConfigError, match="service"):
        require_loopback_dsn("postgres_dsn", "service=prod dbname=x", environ={})
    require_loopback_dsn("postgres_dsn", "host=/var/run/postgresql dbname=x", environ={})
    require_loopback_dsn("postgres_dsn", "dbname=x", environ={})  # the default socket
    require_loopback_dsn("postgres_dsn", "postgresql://u@localhost:5432,[::1]:5433/x", environ={})


def test_postgres_still_connects_on_loopback(postgres_dsn: str, attempts: list[Any]) -> None:
    from backends.net import pg_connect

    with pg_connect(postgres_dsn, connect_timeout=5) as conn:
        assert conn.execute("SELECT 1").fetchone() == (1,)
    assert attempts == []


# -- Bolt -------------------------------------------------------------------------------------


def test_bolt_refuses_a_host_beyond_loopback(attempts: list[Any], trap: Trap) -> None:
    from backends.stores.graph import GraphUnavailableError
    from backends.stores.graph.bolt import BoltGraph

    for uri in (f"bolt://{HOSTILE}:7687", f"neo4j://{trap.host}:{trap.port}"):
        graph = BoltGraph(uri, timeout=2)
        try:
            with pytest.raises(GraphUnavailableError, match=uri.split("//")[1].split(":")[0]):
                graph.bootstrap()
        finally:
            graph.close()
    assert attempts == []
    assert trap.caught() == 0


def test_a_routing_bolt_uri_becomes_a_direct_one() -> None:
    assert loopback_bolt_uri("neo4j_uri", "neo4j://localhost:7687") == "bolt://localhost:7687"
    assert loopback_bolt_uri("neo4j_uri", "neo4j+s://127.0.0.1") == "bolt+s://127.0.0.1"
    assert loopback_bolt_uri("neo4j_uri", "bolt://127.0.0.1:7687") == "bolt://127.0.0.1:7687"
    with pytest.raises(ConfigError, match="not a Bolt URI"):
        loopback_bolt_uri("neo4j_uri", "http://127.0.0.1:7474")


# -- vector servers -----------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_chroma_server_refuses_beyond_loopback_and_ignores_proxies(
    monkeypatch: pytest.MonkeyPatch, attempts: list[Any]
) -> None:
    from backends.errors import StoreUnavailableError
    from backends.stores.engines.chroma import open_server

    with pytest.raises(ConfigError, match=SHOWN):
        open_server(f"http://{HOSTILE}:8000", 2)
    _proxies(monkeypatch, f"http://{HOSTILE}:3128")
    with pytest.raises(StoreUnavailableError):  # nothing listens there: refused, no proxy
        open_server(f"http://127.0.0.1:{_closed_port()}", 2)
    assert attempts == []


def test_qdrant_server_refuses_beyond_loopback_and_ignores_proxies(
    monkeypatch: pytest.MonkeyPatch, attempts: list[Any]
) -> None:
    from backends.models.embedders import HashingEmbedder
    from backends.stores.vectors.qdrant import QdrantSemanticMemory

    embedder = HashingEmbedder()
    with pytest.raises(ConfigError, match=SHOWN):
        QdrantSemanticMemory(embedder, url=f"http://{HOSTILE}:6333", timeout=2)
    _proxies(monkeypatch, f"http://{HOSTILE}:3128")
    with pytest.raises(CustodiaEnvironmentError):
        QdrantSemanticMemory(embedder, url=f"http://127.0.0.1:{_closed_port()}", timeout=2)
    assert attempts == []
