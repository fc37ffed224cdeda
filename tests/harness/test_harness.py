"""The harness itself: each private server answers, restarts, and the network block holds."""

from __future__ import annotations

import contextlib
import os
import socket
import time
import uuid
from pathlib import Path

import neo4j
import pytest

from tests.harness.netblock import NetworkBlockedError, assert_network_blocked, is_loopback
from tests.harness.servers import (
    REQUIRE_ENV,
    FalkorDBServer,
    Neo4jServer,
    PostgresServer,
    RedisServer,
    absorb_bolt_hang,
    find_java_and_maven,
    unavailable,
)

TIMEOUT = 5  # seconds, for every client call below


# --- Redis -----------------------------------------------------------------------------------


@pytest.mark.server
def test_redis_ping_set_get(redis_url: str) -> None:
    import redis

    client = redis.Redis.from_url(redis_url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT)
    try:
        assert client.ping() is True
        client.set("harness:key", "value", ex=60)
        assert client.get("harness:key") == b"value"
    finally:
        client.close()


@pytest.mark.server
def test_redis_stop_and_start_on_same_port(redis_server: RedisServer) -> None:
    import redis

    url = redis_server.url

    def ping() -> bool:
        client = redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2)
        try:
            return bool(client.ping())
        finally:
            client.close()

    assert ping()
    redis_server.stop()
    assert not redis_server.running
    with pytest.raises(redis.exceptions.ConnectionError):
        ping()
    redis_server.start()
    assert redis_server.url == url
    assert ping()


@pytest.mark.server
def test_redis_is_restarted_after_a_test_that_killed_it(redis_server: RedisServer) -> None:
    redis_server.kill()  # the autouse fixture must bring it back for the next test
    assert not redis_server.running


@pytest.mark.server
def test_redis_was_restarted(redis_url: str, redis_server: RedisServer) -> None:
    import redis

    assert redis_server.running
    client = redis.Redis.from_url(redis_url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT)
    try:
        assert client.ping() is True
    finally:
        client.close()


# --- PostgreSQL ------------------------------------------------------------------------------


@pytest.mark.server
def test_postgres_version(postgres_dsn: str) -> None:
    import psycopg

    assert postgres_dsn.startswith("postgresql://postgres@127.0.0.1:")
    with psycopg.connect(postgres_dsn, connect_timeout=TIMEOUT) as conn:
        row = conn.execute("SELECT version()").fetchone()
        assert row is not None and str(row[0]).startswith("PostgreSQL")
        fsync = conn.execute("SHOW fsync").fetchone()
        assert fsync == ("on",)


_created_databases: list[str] = []


@pytest.mark.server
def test_fresh_postgres_db_is_private_and_empty(fresh_postgres_db: str) -> None:
    import psycopg

    with psycopg.connect(fresh_postgres_db, connect_timeout=TIMEOUT) as conn:
        name = conn.execute("SELECT current_database()").fetchone()
        assert name is not None and str(name[0]).startswith("t_")
        _created_databases.append(str(name[0]))
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
        assert tables == (0,)
        conn.execute("CREATE TABLE t (id int PRIMARY KEY)")
        conn.execute("INSERT INTO t VALUES (1)")


@pytest.mark.server
def test_fresh_postgres_db_was_dropped(postgres_dsn: str) -> None:
    import psycopg

    if not _created_databases:
        pytest.skip("runs after test_fresh_postgres_db_is_private_and_empty in the same process")
    with psycopg.connect(postgres_dsn, connect_timeout=TIMEOUT) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_database WHERE datname = %s", (_created_databases[-1],)
        ).fetchone()
    assert row == (0,)


@pytest.mark.server
def test_postgres_commit_survives_immediate_stop(
    postgres_server: PostgresServer, fresh_postgres_db: str
) -> None:
    import psycopg

    with psycopg.connect(fresh_postgres_db, connect_timeout=TIMEOUT, autocommit=True) as conn:
        conn.execute("CREATE TABLE audit (id int PRIMARY KEY, what text NOT NULL)")
        conn.execute("INSERT INTO audit VALUES (1, 'committed before the crash')")
    postgres_server.stop()  # pg_ctl stop -m immediate: no checkpoint, recovery on start
    assert not postgres_server.running
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(fresh_postgres_db, connect_timeout=2).close()
    postgres_server.start()
    with psycopg.connect(fresh_postgres_db, connect_timeout=TIMEOUT) as conn:
        assert conn.execute("SELECT what FROM audit").fetchall() == [
            ("committed before the crash",)
        ]


# --- FalkorDB over Bolt (neo4j driver) and RESP (falkordb client) ----------------------------


@pytest.mark.server
def test_bolt_return_1(bolt_driver: neo4j.Driver) -> None:
    records, _, _ = bolt_driver.execute_query("RETURN 1 AS one")
    assert [r["one"] for r in records] == [1]


@pytest.mark.server
def test_bolt_merge_match_round_trip(bolt_driver: neo4j.Driver) -> None:
    tag = uuid.uuid4().hex[:8]
    rows = [{"key": f"{tag}-{i}", "n": i} for i in range(50)]  # ≤ 50 rows per request
    merge = "UNWIND $rows AS row MERGE (e:HarnessProbe {key: row.key}) SET e.n = row.n"
    count = "MATCH (e:HarnessProbe) WHERE e.key STARTS WITH $tag RETURN count(e) AS c"
    try:
        bolt_driver.execute_query(merge, rows=rows)
        bolt_driver.execute_query(merge, rows=rows)  # MERGE again: still one node per key
        records, _, _ = bolt_driver.execute_query(count, tag=tag)
        assert records[0]["c"] == 50
        bolt_driver.execute_query(
            "MATCH (a:HarnessProbe {key: $a}), (b:HarnessProbe {key: $b}) "
            "MERGE (a)-[r:RELATED]->(b) SET r.weight = 0.5",
            a=f"{tag}-0",
            b=f"{tag}-1",
        )
        records, _, _ = bolt_driver.execute_query(
            "MATCH (a:HarnessProbe {key: $a})-[r:RELATED]->(b) RETURN b.n AS n, r.weight AS w",
            a=f"{tag}-0",
        )
        assert [(r["n"], r["w"]) for r in records] == [(1, 0.5)]
    finally:
        bolt_driver.execute_query(
            "MATCH (e:HarnessProbe) WHERE e.key STARTS WITH $tag DETACH DELETE e", tag=tag
        )
    records, _, _ = bolt_driver.execute_query(count, tag=tag)
    assert records[0]["c"] == 0


@pytest.mark.server
def test_bolt_extra_driver_after_absorbing_the_hang(
    bolt_driver: neo4j.Driver, falkordb_server: FalkorDBServer
) -> None:
    """An extra driver, closed, then absorb_bolt_hang: the next new driver connects at once."""

    def one_query() -> float:
        started = time.monotonic()
        driver = neo4j.GraphDatabase.driver(
            falkordb_server.bolt_uri,
            auth=None,
            connection_timeout=TIMEOUT,
            connection_acquisition_timeout=TIMEOUT,
            max_transaction_retry_time=0,
        )
        try:
            records, _, _ = driver.execute_query("RETURN 2 AS two")
            assert records[0]["two"] == 2
        finally:
            driver.close()
            absorb_bolt_hang(falkordb_server.bolt_uri)
        return time.monotonic() - started

    assert one_query() < TIMEOUT
    assert one_query() < TIMEOUT
    records, _, _ = bolt_driver.execute_query("RETURN 1 AS one")  # the session driver is fine
    assert records[0]["one"] == 1


@pytest.mark.server
def test_bolt_driver_survives_falkordb_restart(
    bolt_driver: neo4j.Driver, falkordb_server: FalkorDBServer
) -> None:
    bolt_uri = falkordb_server.bolt_uri
    falkordb_server.kill()  # e.g. FalkorDB crashed on an oversized request
    falkordb_server.start()
    assert falkordb_server.bolt_uri == bolt_uri
    started = time.monotonic()
    records, _, _ = bolt_driver.execute_query("RETURN 1 AS one")  # reconnects by itself
    assert records[0]["one"] == 1
    assert time.monotonic() - started < 15


@pytest.mark.server
def test_falkordb_resp_graph_query(falkordb_url: str) -> None:
    import falkordb

    db = falkordb.FalkorDB.from_url(
        falkordb_url, socket_timeout=TIMEOUT, socket_connect_timeout=TIMEOUT
    )
    graph = db.select_graph(f"harness_{uuid.uuid4().hex[:8]}")
    try:
        graph.query("UNWIND range(1, 3) AS i CREATE (:Item {n: i})")
        result = graph.query("MATCH (i:Item) RETURN i.n ORDER BY i.n")
        assert result.result_set == [[1], [2], [3]]
        # Errors over RESP carry their message (over Bolt they arrive without it).
        with pytest.raises(Exception, match="nosuchfunction"):
            graph.query("RETURN nosuchfunction(1)")
    finally:
        graph.delete()
        db.connection.close()


# --- Neo4j 5 (the launcher under tests/harness/neo4j) ----------------------------------------


def _listening_ports(pid: int) -> set[int]:
    """The TCP ports process ``pid`` listens on (its socket inodes matched in /proc/net/tcp*)."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):
            target = os.readlink(fd)
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text(encoding="ascii").splitlines()[1:]:
            fields = row.split()
            if fields[3] == "0A" and fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


@pytest.mark.server
def test_neo4j_is_a_real_neo4j_5_community_with_bolt_only(
    neo4j_driver: neo4j.Driver, neo4j_server: Neo4jServer
) -> None:
    records, _, _ = neo4j_driver.execute_query(
        "CALL dbms.components() YIELD name, versions, edition "
        "RETURN name, versions[0] AS v, edition"
    )
    assert records[0]["name"] == "Neo4j Kernel"
    assert records[0]["v"].startswith("5.26.") and records[0]["v"] == neo4j_server.version
    assert records[0]["edition"] == neo4j_server.edition == "community"
    assert neo4j_server.uri.startswith("bolt://127.0.0.1:")
    assert neo4j_server.pid is not None
    assert _listening_ports(neo4j_server.pid) == {neo4j_server.port}  # no HTTP, no HTTPS
    assert neo4j_server.startup_seconds is not None


@pytest.mark.server
def test_neo4j_refuses_a_wrong_password(neo4j_server: Neo4jServer) -> None:
    assert len(neo4j_server.password) >= 8
    for auth in (("neo4j", "wrong-password"), ("neo4j", "neo4j"), None):
        driver = neo4j.GraphDatabase.driver(neo4j_server.uri, auth=auth, connection_timeout=TIMEOUT)
        try:
            with pytest.raises(neo4j.exceptions.AuthError):
                driver.verify_connectivity()
        finally:
            driver.close()


@pytest.mark.server
def test_neo4j_refuses_a_write_in_a_read_session(neo4j_driver: neo4j.Driver) -> None:
    label = f"Harness_{uuid.uuid4().hex[:8]}"
    with (
        neo4j_driver.session(default_access_mode=neo4j.READ_ACCESS) as session,
        pytest.raises(neo4j.exceptions.ClientError) as refused,
    ):
        session.run(f"CREATE (:{label})").consume()
    assert refused.value.code == "Neo.ClientError.Statement.AccessMode"
    records, _, _ = neo4j_driver.execute_query(f"MATCH (n:{label}) RETURN count(n) AS n")
    assert records[0]["n"] == 0


@pytest.mark.server
def test_neo4j_stop_and_start_on_same_port(
    neo4j_driver: neo4j.Driver, neo4j_server: Neo4jServer
) -> None:
    port = neo4j_server.port
    neo4j_server.stop()  # closes the launcher's standard input: a clean close
    assert not neo4j_server.running
    assert "custodia-neo4j stopped" in neo4j_server.log_since_start()
    with pytest.raises((neo4j.exceptions.ServiceUnavailable, neo4j.exceptions.SessionExpired)):
        neo4j_driver.execute_query("RETURN 1")
    neo4j_server.start()
    assert neo4j_server.port == port
    records, _, _ = neo4j_driver.execute_query("RETURN 1 AS one")
    assert records[0]["one"] == 1


def test_no_java_or_maven_is_a_reason(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    reason = find_java_and_maven()
    assert isinstance(reason, str) and "default-jdk-headless" in reason and "maven" in reason


# --- skip or fail ----------------------------------------------------------------------------


def test_unavailable_skips_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUIRE_ENV, raising=False)
    with pytest.raises(pytest.skip.Exception, match="no such server"):
        unavailable("no such server")


def test_unavailable_fails_when_servers_are_required(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(REQUIRE_ENV, "1")
    with pytest.raises(pytest.fail.Exception, match="no such server"):
        unavailable("no such server")


# --- the network block -----------------------------------------------------------------------


def test_non_loopback_ip_is_blocked() -> None:
    error = assert_network_blocked("10.255.255.1", 80)
    assert "10.255.255.1" in str(error)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(2)
        with pytest.raises(NetworkBlockedError):
            sock.connect_ex(("10.255.255.1", 80))
    with (
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp,
        pytest.raises(NetworkBlockedError),
    ):
        udp.sendto(b"x", ("8.8.8.8", 53))


def test_host_names_are_blocked_before_dns() -> None:
    with pytest.raises(NetworkBlockedError, match=r"example\.com"):
        socket.create_connection(("example.com", 80), timeout=2)
    with pytest.raises(NetworkBlockedError, match=r"example\.com"):
        socket.getaddrinfo("example.com", 443)
    with (
        socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock,
        pytest.raises(NetworkBlockedError, match=r"example\.com"),
    ):
        sock.settimeout(2)
        sock.connect(("example.com", 80))
    assert issubclass(NetworkBlockedError, OSError)


def test_loopback_and_unix_sockets_pass(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        port = server.getsockname()[1]
        for host in ("127.0.0.1", "localhost"):
            with socket.create_connection((host, port), timeout=2):
                accepted, _ = server.accept()
                accepted.close()
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as client:
            client.settimeout(2)
            client.connect(("127.0.0.1", port))
            server.accept()[0].close()
    path = str(tmp_path / "s.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix_server:
        unix_server.bind(path)
        unix_server.listen(1)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as unix_client:
            unix_client.settimeout(2)
            unix_client.connect(path)
            unix_server.accept()[0].close()
    assert socket.getaddrinfo("localhost", 80)


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("[::1]", True),
        ("::ffff:127.0.0.1", True),
        ("localhost", True),
        ("LOCALHOST.", True),
        (b"127.0.0.1", True),
        ("0.0.0.0", False),
        ("10.0.0.1", False),
        ("::ffff:10.0.0.1", False),
        ("example.com", False),
        ("localhost.example.com", False),
        (None, False),
    ],
)
def test_is_loopback(host: object, expected: bool) -> None:
    assert is_loopback(host) is expected
