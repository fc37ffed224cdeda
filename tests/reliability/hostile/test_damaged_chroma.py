"""Someone with the Chroma folder (or a crash, or a bad disk) damages the derived index.

The conversations' Chroma index is derived data: whatever state its files are in, Custodia
must come up, say what is wrong or rebuild it from the conversation files — and never lose
a conversation. Each damaged copy is opened in a child forked by the crash harness's
zygote (a crash must not take the test runner with it) the way the app does at start:
``agent.start()`` then ``agent.sync_vectors()``.

Finding (docs/THREAT_MODEL.md): Chroma's HNSW loader (native code) trusts its files. A
truncated ``header.bin`` or a ``data_level0.bin`` full of garbage killed the process with
SIGSEGV before Python could do anything (and so, once in ~1,000 kills, did a segment torn by
a kill mid-persist). ``backends/stores/engines/hnsw_check.py`` now checks the files before chromadb
loads them and a damaged folder is discarded and rebuilt; every case here must come up.
Damage Chroma reports as an error is repaired by rebuilding the index from the files.
"""

from __future__ import annotations

import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.conversations.keys import generate_key
from tests.harness.damage import HOW, damage_file
from tests.reliability.conftest import Figures
from tests.reliability.crash.harness import Zygote
from tests.reliability.crash.scenarios import ConversationsScenario

KEY = generate_key()


def build(home: str) -> int:
    """(In a zygote child) a data dir whose Chroma index has a persisted HNSW segment."""
    path = Path(home)
    agent = ConversationsScenario().agent(path)
    agent.start()
    cid = agent.create(name="crash-0").id
    for i in range(60):
        agent.ask(ConversationsScenario.user_text("crash-0", 2 * i), conversation_id=cid)
    agent.close()
    return 0 if [p for p in (path / "chroma").iterdir() if p.is_dir()] else 9


def open_as_at_start(home: str) -> int:
    """(In a zygote child) what the app does at start: 0 repaired/fine, 3 typed error."""
    from backends.errors import CustodiaEnvironmentError

    agent = ConversationsScenario().agent(Path(home))
    agent.start()
    code = 0
    try:
        report = agent.sync_vectors()
        code = 0 if report.expected == len(agent.vectors().ids()) else 4
    except CustodiaEnvironmentError:
        code = 3
    history = agent.load(agent.conversations()[0].id).history
    return code if len(history) == 120 else 6


@pytest.fixture(scope="module")
def zygote(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Zygote]:
    """Forks come from a process that never opened Chroma (its threads do not survive fork)."""
    server = Zygote(tmp_path_factory.mktemp("zygote"))
    yield server
    server.close()


def _call(zygote: Zygote, function: str, home: Path) -> dict[str, object]:
    lines = zygote.run(
        {"call": f"{__name__}:{function}", "kwargs": {"home": str(home)}, "timeout": 60}
    )
    return lines[-1]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory, zygote: Zygote) -> Path:
    home = tmp_path_factory.mktemp("chroma") / "home"
    home.mkdir(mode=0o700)
    assert _call(zygote, "build", home)["code"] == 0
    return home


def _damage(home: Path, target: str, how: str) -> None:
    for segment in (home / "chroma").iterdir():
        if segment.is_dir() and (segment / target).exists():
            damage_file(segment / target, how)


CASES = [
    pytest.param(target, how, id=f"{target}-{how}")
    for target in ("header.bin", "data_level0.bin", "length.bin", "link_lists.bin",
                   "index_metadata.pickle")
    for how in HOW
]  # fmt: skip


@pytest.mark.parametrize(("target", "how"), CASES)
def test_a_damaged_chroma_index_never_crashes_and_loses_nothing(
    indexed: Path, zygote: Zygote, tmp_path: Path, target: str, how: str, figures: Figures
) -> None:
    home = tmp_path / "home"
    shutil.copytree(indexed, home)
    _damage(home, target, how)
    ended = _call(zygote, "open_as_at_start", home)
    figures.add("hostile", "damaged Chroma files", "inputs")
    if ended["signal"]:
        figures.add("hostile", "damaged Chroma files", "process crashed")
    assert not ended["hung"], "opening the damaged index hung"
    assert not ended["signal"], f"the process died of {signal.Signals(ended['signal']).name}"
    assert ended["code"] in (0, 3), f"untyped failure or lost data: {ended}"
    if ended["code"] == 0:
        figures.add("hostile", "damaged Chroma files", "repaired")
