"""CA4–CA6: the derived Chroma index — incremental, never duplicated, rebuildable, no text."""

from __future__ import annotations

import shutil
import socket
from dataclasses import replace
from pathlib import Path

import pytest

from backends.conversations.files import ConversationFiles
from backends.conversations.keys import HistoryCipher
from backends.errors import DimensionMismatchError, EmbedderMismatchError, StoreUnavailableError
from backends.models.embedders import HashingEmbedder
from backends.progress import Progress

from .conftest import MakeAgent, conversation, tree_bytes

MARKER = "Ultraviolet marmalade sings beneath the ninth harbour bridge"


def _seed(agent, n: int = 4, per: int = 3) -> list[str]:
    """Write conversations straight to the files (no vectors yet); return their ids."""
    ids = []
    for i in range(n):
        conv = conversation(*[f"topic {i} message {j} about kites" for j in range(per)])
        agent.files.write(conv, create=True)
        ids.append(conv.id)
    agent.reconcile()
    return ids


def test_sync_indexes_only_missing_messages_and_never_duplicates(make_agent: MakeAgent) -> None:
    agent = make_agent()
    _seed(agent, 4, 3)
    first = agent.sync_vectors()
    assert (first.expected, first.present, first.added, first.dropped) == (12, 0, 12, 0)
    again = agent.sync_vectors()
    assert (again.added, again.dropped) == (0, 0) and agent.vectors().count() == 12
    agent.ask("one more turn about kites")  # indexed at once
    restarted = make_agent()
    report = restarted.sync_vectors()
    assert (report.expected, report.present, report.added) == (14, 14, 0)
    ids = restarted.vectors().ids()
    assert len(ids) == 14 and all(i.rsplit(":", 1)[1].isdigit() for i in ids)


def test_sync_drops_entries_whose_file_or_message_is_gone(make_agent: MakeAgent) -> None:
    agent = make_agent()
    ids = _seed(agent, 3, 4)
    agent.sync_vectors()
    (agent.folder / f"{ids[0]}.json").unlink()  # a file gone
    conv, _ = agent.files.read(f"{ids[1]}.json")
    conv.history = conv.history[:1]  # three messages gone
    agent.files.write(conv)
    agent.reconcile()
    report = agent.sync_vectors()
    assert (report.dropped, report.added) == (4 + 3, 0)
    assert agent.vectors().ids() == {f"{ids[1]}.json:0"} | {f"{ids[2]}.json:{i}" for i in range(4)}


def test_sync_keeps_what_another_process_is_writing(make_agent: MakeAgent) -> None:
    """Two CLI turns at once: one process's start-up sync must not drop the vectors the
    other one has just written while the index does not list them yet."""
    mine = make_agent()
    known = mine.ask("written before the other process started").conversation_id
    mine.sync_vectors()
    # the other process: a new file and a new turn, their vectors upserted, index rows not
    # written yet (it writes them next)
    other = ConversationFiles(mine.folder)
    new = conversation("from the other process", "its answer")
    other.write(new, create=True)
    turn, _ = other.read(f"{known}.json")
    turn.history.append(turn.history[0])
    other.write(turn)
    ids = [f"{new.id}.json:0", f"{new.id}.json:1", f"{known}.json:2"]
    pointers = [{"file": i.split(":")[0], "index": int(i.split(":")[1])} for i in ids]
    mine.vectors().upsert(ids, mine.embedder().embed_batch(["a", "b", "c"]), pointers)
    report = mine.sync_vectors()
    assert report.dropped == 0 and report.kept == 3
    assert mine.vectors().ids() >= set(ids)
    # once the index has seen the files, the same ids are expected: nothing to do
    mine.reconcile()
    again = mine.sync_vectors()
    assert (again.added, again.dropped, mine.vectors().count()) == (0, 0, 5)
    # a message really gone (the index current) is still dropped
    turn.history.pop()
    other.write(turn)
    mine.reconcile()
    assert mine.sync_vectors().dropped == 1


def test_deleting_the_chroma_folder_then_restarting_rebuilds_the_same_count(
    make_agent: MakeAgent, key: str
) -> None:
    agent = make_agent(key=key)
    _seed(agent, 5, 3)
    agent.ask("and a chat turn")
    agent.sync_vectors()
    count = agent.vectors().count()
    query = "topic 3 message 1 about kites"
    top = [(h.conversation_id, h.index) for h in agent.search(query, 1)]
    agent.close()
    shutil.rmtree(agent.config.chroma_path)
    restarted = make_agent(key=key)
    report = restarted.sync_vectors()
    assert report.present == 0 and report.added == count == 17
    assert restarted.vectors().count() == count
    assert [(h.conversation_id, h.index) for h in restarted.search(query, 1)] == top


def _scan_for_marker(root: Path) -> list[Path]:
    needles = [MARKER.encode(), b"marmalade", b"harbour", MARKER.encode("utf-16-le")]
    return [p for p, data in tree_bytes(root).items() if any(n in data for n in needles)]


def test_no_file_under_chroma_holds_the_text_of_an_encrypted_conversation(
    make_agent: MakeAgent, key: str
) -> None:
    agent = make_agent(key=key)
    cid = agent.ask(MARKER).conversation_id
    _seed(agent, 3, 3)
    agent.sync_vectors()
    agent.rebuild_vectors()  # and after a rebuild too
    assert {h.conversation_id for h in agent.search(MARKER, 2)} == {cid}  # found, decrypted here
    agent.close()
    chroma = agent.config.chroma_path
    files = tree_bytes(chroma)
    assert any(p.name == "chroma.sqlite3" for p in files)
    assert any(p.suffix == ".bin" for p in files)  # the binary segment files are scanned too
    assert _scan_for_marker(chroma) == []
    # nowhere in the data dir: files encrypted, index and vectors pointer-only
    assert _scan_for_marker(agent.config.home) == []


def test_the_scan_does_find_clear_text_where_it_is(make_agent: MakeAgent) -> None:
    """Control for the test above: without a key the JSON holds the marker, Chroma never."""
    agent = make_agent()
    cid = agent.ask(MARKER).conversation_id
    agent.sync_vectors()
    agent.close()
    assert _scan_for_marker(agent.config.home) == [agent.folder / f"{cid}.json"]


def test_chroma_holds_pointers_only(make_agent: MakeAgent) -> None:
    agent = make_agent()
    agent.ask(MARKER)
    collection = agent.vectors()._collection  # type: ignore[attr-defined]
    stored = collection.get(include=["documents", "metadatas"])
    assert stored["documents"] in (None, [None, None])
    assert all(set(m) == {"file", "index"} for m in stored["metadatas"])
    assert collection.metadata["embedder"] == "hashing-384"
    assert collection.metadata["dimension"] == 384
    with pytest.raises(ValueError, match="identifier"):
        agent.vectors().upsert(
            ["x.json:0"], HashingEmbedder(384).embed_batch(["x"]), [{"file": MARKER}]
        )


def test_another_embedder_is_an_explicit_error_until_rebuilt(make_agent: MakeAgent) -> None:
    agent = make_agent()
    _seed(agent, 2, 3)
    agent.sync_vectors()
    agent.close()
    small = make_agent(embedder=HashingEmbedder(64))
    with pytest.raises(DimensionMismatchError, match="384-d"):
        small.sync_vectors()
    with pytest.raises(DimensionMismatchError):
        small.search("kites")
    turn = small.ask("chat still works without search")
    assert "dimension" in turn.context_error and turn.answer
    seen: list[tuple[int, int]] = []
    report = small.rebuild_vectors(Progress(callback=lambda d, t, m: seen.append((d, t))))
    assert report.added == 8 and seen[-1] == (8, 8)
    assert small.vectors().dimension == 64 and small.search("kites", 1)


class RenamedHashing(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__(384)
        self.name = "another-model-384"


def test_same_dimension_other_model_is_an_explicit_error(make_agent: MakeAgent) -> None:
    agent = make_agent()
    agent.ask("hello")
    agent.close()
    other = make_agent(embedder=RenamedHashing())
    with pytest.raises(EmbedderMismatchError, match="another-model-384"):
        other.sync_vectors()
    other.rebuild_vectors()
    assert other.vectors().count() == 2


def test_vectors_of_unreadable_files_are_kept(make_agent: MakeAgent, key: str) -> None:
    agent = make_agent(key=key)
    agent.ask("secret one")
    agent.ask("secret two")
    agent.close()
    keyless = make_agent()
    report = keyless.sync_vectors()
    assert (report.kept, report.dropped, report.added) == (4, 0, 0)
    assert keyless.search("secret one") == []  # pointers into files it cannot read: skipped


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_chroma_server_down_is_a_clear_error_and_chat_goes_on(
    make_agent: MakeAgent, config
) -> None:
    cfg = replace(config, chroma_url=f"http://127.0.0.1:{_closed_port()}", network_timeout=1.0)
    agent = make_agent(cfg=cfg)
    with pytest.raises(StoreUnavailableError, match="Chroma server"):
        agent.sync_vectors()
    turn = agent.ask("is anybody there?")
    assert turn.answer and "Chroma server" in turn.context_error
    assert [r.messages for r in agent.conversations()] == [2]


def test_search_decrypts_locally(make_agent: MakeAgent, key: str) -> None:
    agent = make_agent(key=key)
    cid = agent.ask("The lighthouse keeper paints the stairs green").conversation_id
    other = ConversationFiles(agent.folder, HistoryCipher([key]))
    assert other.read(f"{cid}.json")[0].encrypted
    [hit, *_] = agent.search("lighthouse keeper stairs")
    assert (hit.conversation_id, hit.index, hit.role) == (cid, 0, "user")
    assert hit.text == "The lighthouse keeper paints the stairs green" and hit.score > 0.4
