"""SIGKILL at random points during writes, then a restart: nothing acknowledged is lost.

Scenarios (tests/reliability/crash/scenarios.py): memories (add, edit, delete), multi-agent
sessions (saves and whole coordinator runs with Qdrant memory), encrypted conversations
(turns indexed in Chroma), key rotation, audit appends with erasures and checkpoints, audited
tutor turns and imports of a user's notes, a first start of every store (schema migrations)
killed half-way, and — with a Postgres and a Redis — ``custodia migrate --to server``. After
each kill the next child checks the data dir against every acknowledged write before writing
again; a final run only checks.

5 kills per scenario always run; 200 per scenario under ``slow`` (CUSTODIA_SLOW=1, as CI).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.reliability.conftest import Figures
from tests.reliability.crash.harness import HarnessError, Zygote, crash_loop
from tests.reliability.crash.scenarios import SCENARIOS

NAMES = sorted(SCENARIOS)
QUICK_KILLS = 5
SLOW_KILLS = 200


@pytest.fixture(scope="module")
def zygote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Zygote]:
    """One fork server for the module: the imports are paid once."""
    server = Zygote(tmp_path_factory.mktemp("zygote"))
    yield server
    server.close()


def _loop(
    name: str,
    tmp_path: Path,
    kills: int,
    figures: Figures,
    seed: int,
    zygote: Zygote,
    slow: bool = False,
) -> None:
    result = crash_loop(name, tmp_path, kills, seed=seed, zygote=zygote)
    assert result.kills == kills
    assert result.checks_passed >= kills - result.kills_during_startup + 1
    assert result.acknowledged_writes > 0
    figures.record("crash" if slow else "crash-quick", name, **result.summary())


@pytest.mark.parametrize("name", NAMES)
def test_kill_9_quick(name: str, tmp_path: Path, figures: Figures, zygote: Zygote) -> None:
    _loop(name, tmp_path, QUICK_KILLS, figures, seed=QUICK_KILLS, zygote=zygote)


@pytest.mark.slow
@pytest.mark.timeout(900)  # bounded; a loop takes 25 s to 5 min here
@pytest.mark.parametrize("name", NAMES)
def test_kill_9_200_times(name: str, tmp_path: Path, figures: Figures, zygote: Zygote) -> None:
    kills = SCENARIOS[name].slow_kills
    _loop(name, tmp_path, kills, figures, seed=SLOW_KILLS, zygote=zygote, slow=True)


def test_the_harness_catches_a_lost_acknowledged_write(tmp_path: Path, zygote: Zygote) -> None:
    """A writer that acknowledges a memory it never stored is caught at the next start."""
    with pytest.raises(HarnessError, match="m999: an acknowledged write is missing"):
        crash_loop("lying", tmp_path, 2, seed=1, zygote=zygote)


@pytest.fixture
def migration_servers(fresh_postgres_db: str, redis_url: str) -> Iterator[dict[str, str]]:
    """A fresh Postgres database and a Redis database of the migration's own (emptied)."""
    import uuid

    import redis

    url = redis_url.rsplit("/", 1)[0] + "/9"
    client = redis.Redis.from_url(url, socket_timeout=5)
    client.flushdb()
    yield {"admin_dsn": fresh_postgres_db, "redis_url": url, "roles": f"k{uuid.uuid4().hex[:8]}"}
    client.flushdb()
    client.close()


def _migration(
    tmp_path: Path,
    kills: int,
    figures: Figures,
    zygote: Zygote,
    servers: dict[str, str],
    name: str = "migration",
) -> None:
    result = crash_loop(name, tmp_path, kills, seed=kills, zygote=zygote, extra=servers)
    assert result.kills == kills
    # Progress, not timing (issue 14 #10: on a loaded box 0 of 200 finished): every run that
    # got ready made durable progress, and the next run started from at least there.
    runs = result.infos
    assert len(runs) == kills + 1
    last_after = None
    for run in runs:
        if last_after is not None and "at_start" in run:
            assert run["at_start"] >= last_after, f"progress lost in a kill: {runs}"
        if "after" in run:
            assert run["after"] > run["before"], run
            last_after = run["after"]
        else:
            assert run["early"], f"a run got ready without progress: {run}"
    ready = [run for run in runs if "after" in run]
    assert len(ready) >= kills - result.kills_during_startup + 1
    if kills >= SLOW_KILLS:  # ≥ 180 runs of ≥ 1 step each: whole migrations finished
        assert result.acknowledged_writes > 0
    section = "crash" if kills >= SLOW_KILLS else "crash-quick"
    figures.record(section, name, **result.summary())


@pytest.mark.server
def test_kill_9_during_migration_quick(
    tmp_path: Path, figures: Figures, zygote: Zygote, migration_servers: dict[str, str]
) -> None:
    _migration(tmp_path, QUICK_KILLS, figures, zygote, migration_servers)


@pytest.mark.server
def test_kill_9_during_migration_on_a_loaded_box(
    tmp_path: Path, figures: Figures, zygote: Zygote, migration_servers: dict[str, str]
) -> None:
    """Kills within 2 ms of ready, as a loaded box makes every step 100 times the window:
    each run still makes progress that the next one starts from (no idle machine needed)."""
    _migration(tmp_path, 8, figures, zygote, migration_servers, name="migration-loaded")


@pytest.mark.server
@pytest.mark.slow
@pytest.mark.timeout(420)
def test_kill_9_during_migration_200_times(
    tmp_path: Path, figures: Figures, zygote: Zygote, migration_servers: dict[str, str]
) -> None:
    _migration(tmp_path, SLOW_KILLS, figures, zygote, migration_servers)
