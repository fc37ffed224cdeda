"""Redis, Postgres and the Bolt server stopped and restarted mid-use (real servers).

Each: while the server is down, the work either goes on degraded (sessions without L2, the
tutor without its graph) or fails with a typed, clear error (audit appends); nothing
acknowledged before, during or after is lost; when the server is back, the same open objects
work again. The existing per-assistant tests stop Redis during one coordinator run and find a
Postgres that is down; these add restarts under concurrent load, fresh empty servers and the
headless commands' messages.
"""

from __future__ import annotations

import contextlib
import io
import random
import threading
import time
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from backends import cli
from backends.audit.service import AuditService
from backends.config import Config
from backends.errors import CustodiaEnvironmentError
from backends.models.chat import ScriptedChat
from backends.models.embedders import HashingEmbedder
from backends.multiagent.service import MultiAgentService
from backends.stores.audit_log.postgres import Roles, bootstrap
from backends.stores.sessions import Session
from tests.reliability.conftest import Figures

pytestmark = pytest.mark.server


def _headless(
    argv: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str]:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = cli.main(argv)
    return code, err.getvalue()


def test_redis_restarted_empty_mid_use(
    config: Config, redis_server: Any, monkeypatch: pytest.MonkeyPatch, figures: Figures
) -> None:
    namespace = f"rel{uuid.uuid4().hex[:8]}"
    cfg = replace(config, profile="server", redis_url=redis_server.url).validated()

    def service() -> MultiAgentService:
        return MultiAgentService(
            cfg,
            embedder=lambda: HashingEmbedder(32),
            chat=ScriptedChat,
            namespace=namespace,
            retry_after=0,
        )

    first = service()
    saved = [first.sessions.save(Session.new(f"before {i}")).session_id for i in range(5)]
    try:
        redis_server.stop()
        during = [first.sessions.save(Session.new(f"during {i}")).session_id for i in range(5)]
        health = first.health()
        assert health["sessions L2 (redis)"].startswith("degraded")
        assert health["sessions SQLite"] == "ok"
        final = first.ask("Parse CSV files while Redis is down")
        assert final.phase == "done"
        code, err = _headless(
            ["sessions", "--health"],
            {"CUSTODIA_HOME": str(config.home), "CUSTODIA_PROFILE": "server",
             "CUSTODIA_REDIS_URL": redis_server.url},
            monkeypatch,
        )  # fmt: skip
        assert code == 1 and "Traceback" not in err
    finally:
        redis_server.start()  # empty: no persistence
    first.sessions.save(first.session(saved[0]))  # type: ignore[arg-type]
    assert first.health()["sessions L2 (redis)"] == "ok"
    first.close()
    second = service()  # a restart against the empty Redis: SQLite has everything
    try:
        known = {s.session_id for s in second.list_sessions()}
        assert set(saved) | set(during) | {final.session_id} <= known
        assert second.session(final.session_id).phase == "done"  # type: ignore[union-attr]
    finally:
        second.close()
    figures.record("faults", "Redis stopped and restarted empty", survived=True, sessions=11)


def test_postgres_restarted_under_concurrent_appends(
    fresh_postgres_db: str,
    postgres_server: Any,
    config: Config,
    monkeypatch: pytest.MonkeyPatch,
    figures: Figures,
) -> None:
    roles = bootstrap(fresh_postgres_db, roles=Roles.with_prefix(f"r{uuid.uuid4().hex[:8]}"))
    cfg = replace(
        config, audit_backend="postgres", postgres_dsn=roles.app_dsn, network_timeout=2.0
    ).validated()
    service = AuditService.open(cfg, checkpoint_every=0)
    acked: dict[int, tuple[int, str]] = {}
    refused: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()

    def writer(w: int) -> None:
        rng = random.Random(w)
        n = 0
        while not stop.is_set():
            n += 1
            key = w * 100_000 + n
            try:
                entry = service.append("test.write", None, n=key)
            except CustodiaEnvironmentError as err:
                with lock:
                    refused.append(str(err))
                time.sleep(0.05)
                continue
            with lock:
                acked[key] = (entry.seq, entry.hash)
            time.sleep(rng.uniform(0, 0.01))

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    try:
        time.sleep(0.5)
        postgres_server.stop()
        time.sleep(0.5)
        code, err = _headless(
            ["audit", "verify"],
            {"CUSTODIA_HOME": str(config.home), "CUSTODIA_PROFILE": "server",
             "CUSTODIA_POSTGRES_DSN": roles.app_dsn},
            monkeypatch,
        )  # fmt: skip
        postgres_server.start()
        time.sleep(0.8)
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
        postgres_server.ensure_running()
    try:
        assert refused, "no append saw the server down"
        assert all(r.strip() for r in refused)
        assert code != 0 and err.strip() and "Traceback" not in err
        result = service.verify()
        assert result.ok, result.line()
        stored = {e.data["n"]: (e.seq, e.hash) for e in service.entries()}
        assert len(stored) == result.head.seq  # no duplicate, no gap
        lost = {k: v for k, v in acked.items() if stored.get(k) != v}
        assert not lost, f"{len(lost)} acknowledged appends lost"
        after = service.append("test.write", None, n=-1)
        assert after.seq == result.head.seq + 1
    finally:
        service.close()
    figures.record(
        "faults",
        "Postgres stopped and restarted under 4 writers",
        acknowledged=len(acked),
        refused_while_down=len(refused),
        lost=0,
    )


def test_bolt_server_restarted_mid_use(
    falkordb_server: Any, tmp_path: Path, config: Config, figures: Figures
) -> None:
    from backends.stores.graph.bolt import BoltGraph
    from backends.tutor.service import TutorService
    from tests.backends.tutor.conftest import make_small_kb

    audit = AuditService.open(config)
    # The app's own driver (no transaction retries), not the harness's long-lived one.
    falkordb_server.absorb_bolt_hang()
    graph = BoltGraph(falkordb_server.bolt_uri, namespace=f"rel{uuid.uuid4().hex[:8]}", timeout=2.0)
    tutor = TutorService(
        config,
        embedder=HashingEmbedder(384),
        chat=ScriptedChat(),
        audit=audit,
        graph=graph,
        kb_dir=make_small_kb(tmp_path),
    )
    question = "What does an INR measure for a patient on warfarin?"
    try:
        assert tutor.prepare().graph_ok
        assert tutor.ask(question, "ana").retrieval.methods["graph"]
        falkordb_server.stop()
        try:
            started = time.monotonic()
            turn = tutor.ask(question, "ana")  # degraded, answered, audited
            down_seconds = time.monotonic() - started
            assert turn.answer and turn.passages
            assert any(line.startswith("graph:") for line in turn.degraded)
        finally:
            falkordb_server.start()
            falkordb_server.absorb_bolt_hang()
        deadline = time.monotonic() + 30
        while True:  # the restarted server is empty: the tutor rebuilds its graph
            turn = tutor.ask(question, "ana")
            if turn.retrieval.methods["graph"] or time.monotonic() > deadline:
                break
            tutor.prepare()
        assert turn.retrieval.methods["graph"], turn.degraded
        assert audit.verify().ok
    finally:
        tutor.close()
        audit.close()
        falkordb_server.absorb_bolt_hang()
    figures.record(
        "faults",
        "Bolt server stopped and restarted",
        survived=True,
        turn_seconds_while_down=round(down_seconds, 2),
    )
