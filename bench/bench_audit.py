"""Audit log (issue 6): append throughput and verification, as ratios against the plain chain.

* **plain chain** (the baseline the issue names) — per append, one transaction: take the lock
  (SQLite ``BEGIN IMMEDIATE``; Postgres ``pg_advisory_xact_lock``), read the head, insert
  ``sha256(prev + record)``, commit. Each writer thread has its own connection. Nothing else.
* **ours** — :meth:`AuditService.append` with everything on: the person's fields sealed with
  their key (AES-GCM, pseudonym lookup in the key store), canonical records, generated and
  indexed filter columns, a signed checkpoint every 1,000 records (each after verifying the
  records since the previous one), group commit. Same durability: SQLite ``synchronous=FULL``,
  Postgres default ``fsync``/``synchronous_commit``.

Writers are threads of one process (1, 8, 16); each side first makes 300 untimed appends (a
warm log, not a fresh file). After every run the chain is verified: zero
broken links or the bench fails. Postgres runs on a private server started with the test
harness's classes (skipped, with the reason printed, when no binaries are found).

Verification: a 1M-record SQLite log (bulk-built) verified in full by ``verify_chain`` and by
a plain Python walk (fetch rows, ``sha256`` each, compare) in the same run; then incrementally
from checkpoints 10k and 100k records before the head.

The Merkle tree beside the chain (issue 28, ``--tree`` runs only this part): appends with the
tree against the same service without it (the release before: ``today``) at 1, 8 and 16
writers on both engines, interleaved; on a 1M-record log, building the tree of an existing log
(and resuming a build killed with SIGKILL), an inclusion proof (hashes, time to make, time to
check) and a consistency proof from 500k to 1M.

Run: ``python -m bench.bench_audit`` (``--quick``: 100k records, fewer appends).
"""

from __future__ import annotations

import json
import platform
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from hashlib import sha256
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from backends.audit.checkpoints import Signer, TrustStore  # noqa: E402
from backends.audit.pseudonyms import KeyStore  # noqa: E402
from backends.audit.service import AuditService  # noqa: E402
from backends.audit.verify import verify_chain  # noqa: E402
from backends.stores.audit_log import AuditLog, merkle  # noqa: E402
from backends.stores.audit_log.record import GENESIS, Draft, canonical  # noqa: E402
from backends.stores.audit_log.sqlite import SQLiteAuditLog  # noqa: E402

RESULTS = ROOT / "bench" / "results" / "audit.json"
WRITERS = (1, 8, 16)
REPEATS = 3


def _record(seq: int, writer: int, n: int) -> str:
    return canonical(
        {"seq": seq, "event": "tutor.turn", "data": {"writer": writer, "n": n, "q": "dosis?"}}
    )


# -- throughput -------------------------------------------------------------------------------


def _run_threads(writers: int, per_writer: int, work: Callable[[int, int], None]) -> float:
    """Appends per second of ``writers`` threads each calling ``work(writer, n)``."""
    barrier = threading.Barrier(writers + 1)
    errors: list[BaseException] = []

    def run(writer: int) -> None:
        barrier.wait()
        try:
            for n in range(per_writer):
                work(writer, n)
        except BaseException as err:  # surfaced below
            errors.append(err)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    barrier.wait()
    started = time.perf_counter()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - started
    if errors:
        raise errors[0]
    return writers * per_writer / elapsed


WARM_UP = 300


def _warm_up(work: Callable[[int, int], None]) -> None:
    """Untimed appends first: a running clinic's log, not a file growing from zero bytes
    (measured: the first few hundred commits into a fresh WAL cost up to 1.5x more, as each
    one also extends the file)."""
    for n in range(WARM_UP):
        work(0, -1 - n)


def _plain_sqlite_connect(path: Path, synchronous: str = "FULL") -> sqlite3.Connection:
    """A connection for the plain chain (creating its bare table)."""
    conn = sqlite3.connect(path, isolation_level=None, timeout=60, check_same_thread=False)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(f"PRAGMA synchronous={synchronous}")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS chain (seq INTEGER PRIMARY KEY, record TEXT, hash TEXT)"
    )
    return conn


def _plain_sqlite_append(conn: sqlite3.Connection, writer: int, n: int) -> None:
    """The plain chain's append: lock, read head, insert ``sha256(prev + record)``, commit."""
    conn.execute("BEGIN IMMEDIATE")
    row = conn.execute("SELECT seq, hash FROM chain ORDER BY seq DESC LIMIT 1").fetchone()
    seq, prev = (row[0], row[1]) if row else (0, GENESIS)
    record = _record(seq + 1, writer, n)
    digest = sha256((prev + record).encode("utf-8")).hexdigest()
    conn.execute("INSERT INTO chain VALUES (?, ?, ?)", (seq + 1, record, digest))
    conn.execute("COMMIT")


def _plain_sqlite(path: Path, writers: int, per_writer: int) -> tuple[float, int]:
    conns = [_plain_sqlite_connect(path) for _ in range(writers)]

    def work(writer: int, n: int) -> None:
        _plain_sqlite_append(conns[writer], writer, n)

    _warm_up(work)
    rate = _run_threads(writers, per_writer, work)
    broken = _plain_broken(conns[0].execute("SELECT seq, record, hash FROM chain ORDER BY seq"))
    for conn in conns:
        conn.close()
    return rate, broken


def _plain_broken(rows: Any) -> int:
    prev, broken, expected = GENESIS, 0, 1
    for seq, record, digest in rows:
        if seq != expected or sha256((prev + record).encode()).hexdigest() != digest:
            broken += 1
        prev, expected = digest, seq + 1
    return broken


def _plain_postgres(dsn: str, writers: int, per_writer: int, table: str) -> tuple[float, int]:
    import psycopg

    with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
        conn.execute(f"CREATE TABLE {table} (seq bigint PRIMARY KEY, record text, hash text)")
    conns = [psycopg.connect(dsn, autocommit=True, connect_timeout=5) for _ in range(writers)]

    def work(writer: int, n: int) -> None:
        conn = conns[writer]
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(42)")
            row = conn.execute(
                f"SELECT seq, hash FROM {table} ORDER BY seq DESC LIMIT 1"
            ).fetchone()
            seq, prev = (row[0], row[1]) if row else (0, GENESIS)
            record = _record(seq + 1, writer, n)
            digest = sha256((prev + record).encode("utf-8")).hexdigest()
            conn.execute(f"INSERT INTO {table} VALUES (%s, %s, %s)", (seq + 1, record, digest))

    _warm_up(work)
    rate = _run_threads(writers, per_writer, work)
    broken = _plain_broken(conns[0].execute(f"SELECT seq, record, hash FROM {table} ORDER BY seq"))
    for conn in conns:
        conn.close()
    return rate, broken


PEOPLE = [f"patient-{i}" for i in range(50)]


def _service(log: AuditLog, home: Path) -> AuditService:
    """Everything on: key store, signing key, trust file, a checkpoint every 1,000 records;
    the people's keys exist already, as in a running clinic."""
    keys = KeyStore(home / "audit-keys.sqlite3")
    signer = Signer.load_or_create(home / "audit-signing.key")
    trust = TrustStore(home / "audit-checkpoints.jsonl", signer.public_key)
    for person in PEOPLE:
        keys.pseudonym(person)
    return AuditService(log, keys, signer, trust, checkpoint_every=1000)


def _service_append(service: AuditService, writer: int, n: int) -> None:
    service.append(
        "tutor.turn",
        PEOPLE[(writer * 7 + n) % len(PEOPLE)],
        personal={"question": "dosis de amoxicilina?", "n": n},
        writer=writer,
        n=n,
    )


def _ours(
    make_log: Callable[[], AuditLog], home: Path, writers: int, per_writer: int
) -> tuple[float, int]:
    service = _service(make_log(), home)

    def work(writer: int, n: int) -> None:
        _service_append(service, writer, n)

    _warm_up(work)
    rate = _run_threads(writers, per_writer, work)
    result = verify_chain(service.log, service.trust)
    service.close()
    return rate, 0 if result.ok else 1


def _throughput(
    name: str,
    plain: Callable[[int, int, int], tuple[float, int]],
    ours: Callable[[int, int, int], tuple[float, int]],
    total: int,
) -> list[dict[str, Any]]:
    rows = []
    for writers in WRITERS:
        per_writer = max(total // writers, 10)
        plain_rates, our_rates, broken = [], [], 0
        for repeat in range(REPEATS):
            rate, bad = plain(writers, per_writer, repeat)
            plain_rates.append(rate)
            broken += bad
            rate, bad = ours(writers, per_writer, repeat)
            our_rates.append(rate)
            broken += bad
        row: dict[str, Any] = {
            "backend": name,
            "writers": writers,
            "appends": writers * per_writer,
            "plain_per_s": statistics.median(plain_rates),
            "ours_per_s": statistics.median(our_rates),
            "broken_links": broken,
        }
        row["ratio"] = row["ours_per_s"] / row["plain_per_s"]
        rows.append(row)
        print(
            f"  {name:8} {writers:2d} writers: plain {row['plain_per_s']:8.0f}/s  "
            f"ours {row['ours_per_s']:8.0f}/s  ratio {row['ratio']:.2f}x  broken {broken}",
            flush=True,
        )
        if broken:
            raise SystemExit(f"{name}: broken links after concurrent appends")
    return rows


def sqlite_throughput(tmp: Path, total: int) -> list[dict[str, Any]]:
    def plain(writers: int, per_writer: int, repeat: int) -> tuple[float, int]:
        return _plain_sqlite(tmp / f"plain-{writers}-{repeat}.sqlite3", writers, per_writer)

    def ours(writers: int, per_writer: int, repeat: int) -> tuple[float, int]:
        home = tmp / f"ours-{writers}-{repeat}"
        home.mkdir(mode=0o700)
        return _ours(lambda: SQLiteAuditLog(home / "audit.sqlite3"), home, writers, per_writer)

    return _throughput("sqlite", plain, ours, total)


ANATOMY_BLOCK = 100


def _anatomy_at(tmp: Path, sync: str, rounds: int) -> dict[str, float]:
    """µs per append of the three appends, interleaved, at one ``synchronous`` setting."""
    plain = _plain_sqlite_connect(tmp / f"anatomy-plain-{sync}.sqlite3", sync)
    log = SQLiteAuditLog(tmp / f"anatomy-log-{sync}.sqlite3")
    home = tmp / f"anatomy-service-{sync}"
    home.mkdir(mode=0o700)
    service = _service(SQLiteAuditLog(home / "audit.sqlite3"), home)
    # measurement only: OFF shows the CPU cost of the same statements without the fsync
    for audit_log in (log, service.log):
        audit_log._conn.execute(f"PRAGMA synchronous={sync}")  # type: ignore[attr-defined]
    draft = Draft("tutor.turn", "p-0123456789abcdef", {"writer": 0, "n": 1}, "v1." + "A" * 80)
    works: dict[str, Callable[[int], object]] = {
        "plain": lambda n: _plain_sqlite_append(plain, 0, n),
        "log": lambda n: log.append_many([draft]),
        "service": lambda n: _service_append(service, 0, n),
    }
    spent = dict.fromkeys(works, 0.0)
    for work in works.values():
        for n in range(WARM_UP):
            work(-1 - n)
    for r in range(rounds):
        for name, work in works.items():
            started = time.perf_counter()
            for n in range(r * ANATOMY_BLOCK, (r + 1) * ANATOMY_BLOCK):
                work(n)
            spent[name] += time.perf_counter() - started
    plain.close()
    log.close()
    service.close()
    return {name: t / (rounds * ANATOMY_BLOCK) * 1e6 for name, t in spent.items()}


def single_writer_anatomy(tmp: Path, rounds: int) -> dict[str, Any]:
    """Why one SQLite writer stays below the plain chain: three appends, one thread, on three
    files, interleaved in blocks of 100 (so disk drift hits all three alike) — the plain
    chain, our log layer with a prepared draft (no sealing, no checkpoints, no service), and
    the full service — once at ``synchronous=FULL`` (the product) and once at ``OFF`` (the
    same work without the ``fdatasync``: its CPU cost alone)."""
    full = _anatomy_at(tmp, "FULL", rounds)
    off = _anatomy_at(tmp, "OFF", rounds)
    out: dict[str, Any] = {"block": ANATOMY_BLOCK, "rounds": rounds, "full": full, "off": off}
    out["ratio"] = full["plain"] / full["service"]
    out["extra_full_us"] = full["service"] - full["plain"]
    out["extra_cpu_us"] = off["service"] - off["plain"]
    print(
        "  one writer, interleaved (µs per append; plain / log layer / service):\n"
        f"    synchronous=FULL  {full['plain']:6.1f} / {full['log']:6.1f} / "
        f"{full['service']:6.1f}   ratio {out['ratio']:.2f}x\n"
        f"    synchronous=OFF   {off['plain']:6.1f} / {off['log']:6.1f} / "
        f"{off['service']:6.1f}   (CPU only)",
        flush=True,
    )
    return out


def postgres_throughput(tmp: Path, total: int) -> tuple[list[dict[str, Any]], str]:
    """(rows, reason it was skipped or "")."""
    try:
        from tests.harness.servers import (
            PostgresCluster,
            PostgresServer,
            ServerStartError,
            find_postgres_bin_dir,
            free_port,
        )
    except ImportError as err:
        return [], f"test harness not importable: {err}"
    bin_dir = find_postgres_bin_dir()
    if bin_dir is None:
        return [], "no PostgreSQL binaries (install Debian `postgresql`)"
    root = Path(tempfile.mkdtemp(prefix="custodia-servers-bench-"))
    root.chmod(0o755)
    server = None
    try:
        cluster = PostgresCluster(bin_dir, root)
        cluster.init()
        server = PostgresServer(cluster, free_port())
        server.start()
    except ServerStartError as err:
        return [], f"PostgreSQL did not start: {err}"
    try:
        import psycopg

        from backends.stores.audit_log.postgres import PostgresAuditLog, Roles, bootstrap

        def fresh_db(name: str) -> str:
            assert server is not None
            with psycopg.connect(server.dsn, autocommit=True, connect_timeout=5) as conn:
                conn.execute(f"CREATE DATABASE {name}")
            return server.dsn_for(name)

        def plain(writers: int, per_writer: int, repeat: int) -> tuple[float, int]:
            return _plain_postgres(
                fresh_db(f"plain_{writers}_{repeat}"), writers, per_writer, "chain"
            )

        def ours(writers: int, per_writer: int, repeat: int) -> tuple[float, int]:
            dsn = fresh_db(f"ours_{writers}_{repeat}")
            done = bootstrap(dsn, roles=Roles.with_prefix(f"b{writers}_{repeat}"))
            home = tmp / f"pg-{writers}-{repeat}"
            home.mkdir(mode=0o700)
            return _ours(lambda: PostgresAuditLog(done.app_dsn), home, writers, per_writer)

        return _throughput("postgres", plain, ours, total), ""
    finally:
        server.close()
        import shutil

        shutil.rmtree(root, ignore_errors=True)


# -- verification -----------------------------------------------------------------------------


def bulk_build(path: Path, count: int, batch: int = 100_000) -> SQLiteAuditLog:
    """A log of ``count`` chained records, written straight into the schema (fast)."""
    log = SQLiteAuditLog(path)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA synchronous=OFF")  # a bench fixture, not the product's write path
    prefix = '{"data":{"model":"smollm2","n":'
    middle = ',"sources":["guia-asma-2024#3","vademecum#812"]},"event":"tutor.turn",'
    middle += '"pseudonym":"p-0123456789abcdef","sealed":"v1.' + "A" * 88 + '","seq":'
    suffix = ',"time":"2025-01-31T12:00:00.000000Z","v":1}'
    prev = GENESIS
    for start in range(1, count + 1, batch):
        rows = []
        for seq in range(start, min(start + batch, count + 1)):
            record = f"{prefix}{seq}{middle}{seq}{suffix}"
            prev = sha256((prev + record).encode("utf-8")).hexdigest()
            rows.append((seq, record, prev))
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO audit_log(seq, record, hash) VALUES (?, ?, ?)", rows)
        conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    return log


def plain_walk(path: Path) -> float:
    """The baseline: fetch each row, sha256 it, compare — a plain Python loop."""
    started = time.perf_counter()
    conn = sqlite3.connect(path)
    prev = GENESIS
    for _seq, record, digest in conn.execute(
        "SELECT seq, record, hash FROM audit_log ORDER BY seq"
    ):
        if sha256((prev + record).encode("utf-8")).hexdigest() != digest:
            raise SystemExit("plain walk: broken chain")
        prev = digest
    conn.close()
    return time.perf_counter() - started


def verification(tmp: Path, count: int) -> dict[str, Any]:
    started = time.perf_counter()
    log = bulk_build(tmp / "big.sqlite3", count)
    build = time.perf_counter() - started
    print(f"  built {count:,} records in {build:.1f} s", flush=True)
    full, plain = [], []
    for _ in range(REPEATS):
        result = verify_chain(log)
        if not result.ok or result.records != count:
            raise SystemExit(f"verification failed: {result.line()}")
        full.append(result.seconds)
        plain.append(plain_walk(tmp / "big.sqlite3"))
    out: dict[str, Any] = {
        "records": count,
        "full_s": statistics.median(full),
        "plain_walk_s": statistics.median(plain),
    }
    out["full_records_per_s"] = count / out["full_s"]
    out["plain_records_per_s"] = count / out["plain_walk_s"]
    out["speedup_vs_plain_walk"] = out["plain_walk_s"] / out["full_s"]
    print(
        f"  full verification {out['full_s']:.2f} s ({out['full_records_per_s']:,.0f}/s); "
        f"plain walk {out['plain_walk_s']:.2f} s ({out['plain_records_per_s']:,.0f}/s)",
        flush=True,
    )
    signer = Signer.load_or_create(tmp / "bench-signing.key")
    incremental = []
    for new in (count // 100, count // 10):
        trust = TrustStore(tmp / f"trust-{new}.jsonl", signer.public_key)
        anchor = log.get(count - new)
        assert anchor is not None
        trust.accept(signer.sign(log.log_id, anchor.seq, anchor.hash))
        times = []
        for _ in range(REPEATS):
            result = verify_chain(log, trust, from_checkpoint=True)
            if not result.ok or result.verified != new:
                raise SystemExit(f"incremental verification failed: {result.line()}")
            times.append(result.seconds)
        row = {"new_records": new, "seconds": statistics.median(times)}
        row["fraction_of_full"] = row["seconds"] / out["full_s"]
        incremental.append(row)
        print(
            f"  incremental, {new:,} new records: {row['seconds'] * 1000:.0f} ms "
            f"({row['fraction_of_full']:.3f} of full)",
            flush=True,
        )
    out["incremental"] = incremental
    log.close()
    return out


# -- the Merkle tree (issue 28) ---------------------------------------------------------------


def _without_tree(log: AuditLog) -> AuditLog:
    """The same log as the release before the tree wrote it: no tree maintained on append."""
    log._has_tree = False  # type: ignore[attr-defined]  # measurement only
    return log


def tree_throughput(tmp: Path, sqlite_total: int, postgres_total: int) -> list[dict[str, Any]]:
    """Appends/s of the full service with the tree against without it, both engines."""

    def sqlite_side(tree: bool) -> Callable[[int, int, int], tuple[float, int]]:
        def run(writers: int, per_writer: int, repeat: int) -> tuple[float, int]:
            home = tmp / f"tree-{tree}-{writers}-{repeat}"
            home.mkdir(mode=0o700)

            def make() -> AuditLog:
                log = SQLiteAuditLog(home / "audit.sqlite3")
                return log if tree else _without_tree(log)

            return _ours(make, home, writers, per_writer)

        return run

    rows = _throughput("sqlite", sqlite_side(False), sqlite_side(True), sqlite_total)
    for row in rows:
        row["baseline"] = "the same service without the tree"
    pg_rows, skipped = _postgres_tree_throughput(tmp, postgres_total)
    if skipped:
        print(f"  postgres: skipped — {skipped}", flush=True)
    return rows + pg_rows


def _postgres_tree_throughput(tmp: Path, total: int) -> tuple[list[dict[str, Any]], str]:
    try:
        from tests.harness.servers import (
            PostgresCluster,
            PostgresServer,
            ServerStartError,
            find_postgres_bin_dir,
            free_port,
        )
    except ImportError as err:
        return [], f"test harness not importable: {err}"
    bin_dir = find_postgres_bin_dir()
    if bin_dir is None:
        return [], "no PostgreSQL binaries"
    root = Path(tempfile.mkdtemp(prefix="custodia-servers-bench-"))
    root.chmod(0o755)
    try:
        cluster = PostgresCluster(bin_dir, root)
        cluster.init()
        server = PostgresServer(cluster, free_port())
        server.start()
    except ServerStartError as err:
        return [], f"PostgreSQL did not start: {err}"
    try:
        import psycopg

        from backends.stores.audit_log.postgres import PostgresAuditLog, Roles, bootstrap

        def side(tree: bool) -> Callable[[int, int, int], tuple[float, int]]:
            def run(writers: int, per_writer: int, repeat: int) -> tuple[float, int]:
                name = f"t{int(tree)}_{writers}_{repeat}"
                with psycopg.connect(server.dsn, autocommit=True, connect_timeout=5) as conn:
                    conn.execute(f"CREATE DATABASE {name}")
                dsn = server.dsn_for(name)
                done = bootstrap(dsn, roles=Roles.with_prefix(name))
                if not tree:  # a schema from before the tree: the server skips it
                    with psycopg.connect(dsn, autocommit=True, connect_timeout=5) as conn:
                        conn.execute("DROP TABLE custodia_audit.audit_tree")
                home = tmp / f"pgtree-{name}"
                home.mkdir(mode=0o700)
                return _ours(lambda: PostgresAuditLog(done.app_dsn), home, writers, per_writer)

            return run

        rows = _throughput("postgres", side(False), side(True), total)
        for row in rows:
            row["baseline"] = "the same service without the tree"
        return rows, ""
    finally:
        server.close()
        import shutil

        shutil.rmtree(root, ignore_errors=True)


def tree_anatomy(tmp: Path, rounds: int) -> dict[str, Any]:
    """µs per append of the full service with and without the tree, one writer, interleaved
    in blocks of 100 on two files (so the disk's drift and the other work on the machine hit
    both alike), at ``synchronous=FULL`` (the product) and ``OFF`` (the CPU cost alone)."""
    out: dict[str, Any] = {"block": ANATOMY_BLOCK, "rounds": rounds}
    for sync in ("FULL", "OFF"):
        services = {}
        for name in ("without", "with"):
            home = tmp / f"tree-anatomy-{sync}-{name}"
            home.mkdir(mode=0o700)
            log = SQLiteAuditLog(home / "audit.sqlite3")
            log._conn.execute(f"PRAGMA synchronous={sync}")  # measurement only
            services[name] = _service(log if name == "with" else _without_tree(log), home)
        spent = dict.fromkeys(services, 0.0)
        cpu = dict.fromkeys(services, 0.0)  # this process's CPU: the box is shared
        for service in services.values():
            for n in range(WARM_UP):
                _service_append(service, 0, -1 - n)
        for r in range(rounds):
            for name, service in services.items():
                started, used = time.perf_counter(), time.process_time()
                for n in range(r * ANATOMY_BLOCK, (r + 1) * ANATOMY_BLOCK):
                    _service_append(service, 0, n)
                spent[name] += time.perf_counter() - started
                cpu[name] += time.process_time() - used
        for service in services.values():
            service.close()
        count = rounds * ANATOMY_BLOCK
        us = {name: t / count * 1e6 for name, t in spent.items()}
        us_cpu = {name: t / count * 1e6 for name, t in cpu.items()}
        out[sync.lower()] = {"wall_us": us, "cpu_us": us_cpu}
        print(
            f"  one writer, interleaved, synchronous={sync}: without the tree "
            f"{us['without']:.1f} µs ({us_cpu['without']:.1f} CPU), with it "
            f"{us['with']:.1f} µs ({us_cpu['with']:.1f} CPU) per append "
            f"(ratio {us['without'] / us['with']:.2f}x)",
            flush=True,
        )
    return out


_KILL_SCRIPT = """
import sys
sys.path.insert(0, {root!r})
from backends.stores.audit_log.sqlite import SQLiteAuditLog
SQLiteAuditLog.TREE_BATCH = 20_000
SQLiteAuditLog({path!r})
"""


def tree_at_scale(tmp: Path, count: int) -> dict[str, Any]:
    """Build, resume after SIGKILL, prove and check on a ``count``-record log."""
    import random
    import signal
    import subprocess

    path = tmp / "tree-big.sqlite3"
    log = bulk_build(path, count)  # opened once: tree built for 0 records, then bulk rows
    log.close()
    # a build killed with SIGKILL part way, then resumed by the next start
    child = subprocess.Popen(
        [sys.executable, "-c", _KILL_SCRIPT.format(root=str(ROOT), path=str(path))]
    )
    time.sleep(1.5)
    child.send_signal(signal.SIGKILL)
    child.wait()
    probe = SQLiteAuditLog(path, read_only=True)
    killed_at = probe.tree_size()
    probe.close()
    started = time.perf_counter()
    log = SQLiteAuditLog(path)  # resumes
    resume_s = time.perf_counter() - started
    if log.tree_size() != count:
        raise SystemExit(f"the resumed build covers {log.tree_size()} of {count}")
    # a full build from nothing, timed (the tree wiped below the application)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("DROP TRIGGER audit_tree_no_delete")
    conn.execute("DELETE FROM audit_tree")
    conn.execute("VACUUM")
    conn.close()
    log.close()
    log = SQLiteAuditLog.__new__(SQLiteAuditLog)
    started, cpu = time.perf_counter(), time.process_time()
    SQLiteAuditLog.__init__(log, path)
    build_s = time.perf_counter() - started
    build_cpu_s = time.process_time() - cpu  # this process's own cost (the box is shared)
    root = merkle.root(count, log.tree_nodes)
    walk = merkle.CompactRange()
    for rows in log.chain(0):
        walk.extend(merkle.leaf_hash(r) for _, r, _ in rows)
    if walk.root() != root:
        raise SystemExit("the built tree's root is not the records' root")
    rng = random.Random(6962)
    make, check, lengths = [], [], []
    for _ in range(200):
        index = rng.randrange(count)
        entry = log.get(index + 1)
        assert entry is not None
        t0 = time.perf_counter()
        path_hashes = merkle.inclusion_proof(index, count, log.tree_nodes)
        t1 = time.perf_counter()
        merkle.verify_inclusion(
            index, count, merkle.leaf_hash(entry.record.encode()), path_hashes, root
        )
        t2 = time.perf_counter()
        make.append(t1 - t0)
        check.append(t2 - t1)
        lengths.append(len(path_hashes))
    old = count // 2
    old_root = merkle.root(old, log.tree_nodes)
    consistency = []
    for _ in range(20):
        t0 = time.perf_counter()
        proof = merkle.consistency_proof(old, count, log.tree_nodes)
        consistency.append(time.perf_counter() - t0)
    merkle.verify_consistency(old, count, old_root, root, proof)
    result = verify_chain(log)  # the chain walk now also rebuilds the Merkle root
    if not result.ok:
        raise SystemExit(f"verification failed: {result.line()}")
    log.close()
    out = {
        "records": count,
        "build_s": build_s,
        "build_cpu_s": build_cpu_s,
        "verify_s": result.seconds,
        "killed_at_leaves": int(killed_at),
        "resume_s": resume_s,
        "inclusion_ms": statistics.median(make) * 1000,
        "inclusion_max_hashes": max(lengths),
        "check_ms": statistics.median(check) * 1000,
        "consistency_ms": statistics.median(consistency) * 1000,
        "consistency_hashes": len(proof),
    }
    print(
        f"  tree of {count:,}: built in {out['build_s']:.1f} s ({build_cpu_s:.1f} s CPU); "
        f"verify with the root {result.seconds:.1f} s; killed at {killed_at:,} leaves, "
        f"resumed in {resume_s:.1f} s; inclusion {out['inclusion_ms']:.2f} ms "
        f"(≤ {out['inclusion_max_hashes']} hashes), check {out['check_ms']:.3f} ms; "
        f"consistency {old:,}→{count:,} {out['consistency_ms']:.2f} ms "
        f"({len(proof)} hashes)",
        flush=True,
    )
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = sys.argv[1:] if argv is None else argv
    quick = "--quick" in args
    records = 100_000 if quick else 1_000_000
    if "--tree" in args:
        return tree_main(quick, records)
    if "--tree-anatomy" in args:  # the interleaved single-writer comparison alone
        with tempfile.TemporaryDirectory(prefix="custodia-bench-audit-tree-") as name:
            return tree_anatomy(Path(name), 8 if quick else 30)
    sqlite_total = 400 if quick else 1_600
    postgres_total = 300 if quick else 1_200
    with tempfile.TemporaryDirectory(prefix="custodia-bench-audit-") as name:
        tmp = Path(name)
        print("append throughput (appends/s, median of 3; threads of one process)", flush=True)
        rows = sqlite_throughput(tmp, sqlite_total)
        anatomy = single_writer_anatomy(tmp, 8 if quick else 30)
        pg_rows, pg_skipped = postgres_throughput(tmp, postgres_total)
        if pg_skipped:
            print(f"  postgres: skipped — {pg_skipped}", flush=True)
        print(f"verification ({records:,} records, SQLite)", flush=True)
        verify = verification(tmp, records)
    result = {
        "machine": {"python": platform.python_version(), "sqlite": sqlite3.sqlite_version},
        "quick": quick,
        "throughput": rows + pg_rows,
        "single_writer_anatomy": anatomy,
        "postgres_skipped": pg_skipped,
        "verification": verify,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")
    return result


TREE_RESULTS = ROOT / "bench" / "results" / "audit_tree.json"


def tree_main(quick: bool, records: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="custodia-bench-audit-tree-") as name:
        tmp = Path(name)
        rows: list[dict[str, Any]] = []
        anatomy: dict[str, Any] = {}
        if "--scale-only" not in sys.argv:
            print("appends/s with the Merkle tree against without (median of 3)", flush=True)
            rows = tree_throughput(tmp, 400 if quick else 1_600, 300 if quick else 1_200)
            anatomy = tree_anatomy(tmp, 8 if quick else 30)
        print(f"the tree at scale ({records:,} records, SQLite)", flush=True)
        scale = tree_at_scale(tmp, records)
    result = {
        "machine": {"python": platform.python_version(), "sqlite": sqlite3.sqlite_version},
        "quick": quick,
        "throughput": rows,
        "single_writer_anatomy": anatomy,
        "scale": scale,
    }
    TREE_RESULTS.parent.mkdir(parents=True, exist_ok=True)
    TREE_RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {TREE_RESULTS.relative_to(ROOT)}")
    return result


if __name__ == "__main__":
    main()
