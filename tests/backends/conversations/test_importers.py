"""Export (JSON, Markdown) and import (our JSON, ChatGPT conversations.json / .zip)."""

from __future__ import annotations

import json
import stat
import zipfile
from collections.abc import Mapping
from pathlib import Path

import pytest

from backends.conversations import importers
from backends.conversations.errors import HistoryKeyRequiredError, KeyRequiredError
from backends.conversations.importers import ExportError, ImportFormatError
from backends.conversations.naming import MAX_NAME

from .conftest import FIXTURES, MakeAgent, tree_bytes

CHATGPT = FIXTURES / "chatgpt_conversations.json"


def test_chatgpt_import_follows_the_branch_the_user_saw(make_agent: MakeAgent, key: str) -> None:
    agent = make_agent(key=key)
    result = importers.import_file(agent, CHATGPT)
    assert [name for _, name in result.imported] == [
        "Sourdough starter help (imported)",
        "Trip to Lisbon (imported)",
    ]
    rows = {r.name: r for r in agent.conversations()}
    bread = agent.load(rows["Sourdough starter help (imported)"].id)
    assert (bread.provider, bread.model) == ("chatgpt", "gpt-4o")
    assert bread.date == "2024-05-01T11:00:00+00:00"
    assert [(m.role, m.content[:24]) for m in bread.history] == [
        ("user", "My sourdough starter sme"),
        ("assistant", "Not dead: an acetone sme"),
        ("user", "How much flour per feedi"),
        ("assistant", "Keep 50 g of starter and"),  # the regenerated answer, not the draft
    ]
    assert bread.history[1].model == "chatgpt:gpt-4o"
    assert bread.history[0].time == "2024-05-01T11:00:01+00:00"
    trip = agent.load(rows["Trip to Lisbon (imported)"].id)
    assert trip.history[0].content == "[image]\nWhich tram is this, and does it go to Belém?"
    assert [m.role for m in trip.history] == ["user", "assistant", "assistant"]  # tool skipped
    assert all(r.encrypted for r in agent.conversations())  # stored under our key
    agent.sync_vectors()
    [hit] = agent.search("tram to Belém", 1)
    assert hit.conversation_id == trip.id


def test_imports_never_overwrite(make_agent: MakeAgent) -> None:
    agent = make_agent()
    importers.import_file(agent, CHATGPT)
    before = tree_bytes(agent.folder)
    # the same file again: the same messages are already here, so nothing is added (said)
    again = importers.import_file(agent, CHATGPT)
    assert again.imported == [] and again.duplicates == [
        "Sourdough starter help",
        "Trip to Lisbon",
    ]
    assert tree_bytes(agent.folder) == before
    # our own export with its messages changed, imported back: same ids are taken, so new
    # ids; the existing files are untouched
    text, problems = importers.export(agent, None, "json")
    bundle = json.loads(text)
    for item in bundle["conversations"]:
        item["history"][-1]["content"] += " (edited)"
    tmp = agent.config.home / "export.json"
    importers.write_private(tmp, json.dumps(bundle))
    result = importers.import_file(agent, tmp)
    assert not problems and result.renamed == 2 and len(agent.conversations()) == 4
    assert all(tree_bytes(agent.folder)[p] == data for p, data in before.items())
    originals = {i["id"] for i in bundle["conversations"]}
    assert not originals & {cid for cid, _ in result.imported}
    # one "(imported)" suffix, not two
    assert sorted(name for _, name in result.imported) == [
        "Sourdough starter help (imported)",
        "Trip to Lisbon (imported)",
    ]


def test_json_export_round_trips_into_an_empty_data_dir(
    make_agent: MakeAgent, config, tmp_path: Path
) -> None:
    from dataclasses import replace

    agent = make_agent()
    first = agent.ask("Export me, please").conversation_id
    agent.rename(first, "Kept name")
    text, _ = importers.export(agent, [first], "json")
    path = tmp_path / "one.json"
    importers.write_private(path, text)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    home = tmp_path / "elsewhere"
    home.mkdir()
    other = make_agent(cfg=replace(config, home=home))
    result = importers.import_file(other, path)
    assert result.imported == [(first, "Kept name (imported)")] and result.renamed == 0
    assert other.load(first).history == agent.load(first).history


def test_markdown_export(make_agent: MakeAgent) -> None:
    agent = make_agent()
    importers.import_file(agent, CHATGPT)
    text, _ = importers.export(agent, None, "markdown")
    assert "# Sourdough starter help" in text and "# Trip to Lisbon" in text
    assert "- Provider: chatgpt" in text and "## User (2024-05-01T11:00:01+00:00)" in text
    assert "Keep 50 g of starter" in text and "\n---\n" in text


def test_our_encrypted_file_imports_with_the_right_key_only(
    make_agent: MakeAgent, key: str, config, tmp_path: Path
) -> None:
    from dataclasses import replace

    agent = make_agent(key=key)
    cid = agent.ask("A file copied from another machine").conversation_id
    copied = tmp_path / "copy.json"
    copied.write_bytes((agent.folder / f"{cid}.json").read_bytes())
    home = tmp_path / "second"
    home.mkdir()
    same_key = make_agent(key=key, cfg=replace(config, home=home))
    assert importers.import_file(same_key, copied).imported == [
        (cid, agent.load(cid).display_name + " (imported)")
    ]
    home3 = tmp_path / "third"
    home3.mkdir()
    no_key = make_agent(cfg=replace(config, home=home3))
    with pytest.raises(KeyRequiredError, match="no key"):
        importers.import_file(no_key, copied)
    assert no_key.conversations() == []


def test_zip_export_of_chatgpt_and_bad_inputs(make_agent: MakeAgent, tmp_path: Path) -> None:
    agent = make_agent()
    archive = tmp_path / "chatgpt-export.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(CHATGPT, "conversations.json")
        zf.writestr("chat.html", "<html></html>")
    assert len(importers.import_file(agent, archive).imported) == 2
    for name, content in {
        "notjson.json": b"{",
        "other.json": b'{"hello": 1}',
        "empty.zip": b"PK\x05\x06" + b"\x00" * 18,
    }.items():
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(ImportFormatError):
            importers.import_file(agent, path)
    assert len(agent.conversations()) == 2


def test_chatgpt_without_current_node_follows_the_last_branch() -> None:
    data = json.loads(CHATGPT.read_text())[0]
    del data["current_node"]
    conv = importers.from_chatgpt(data, "x")
    assert conv.history[-1].content.startswith("Keep 50 g")


def test_an_export_replaces_an_existing_file_with_a_private_one(tmp_path: Path) -> None:
    target = tmp_path / "old-export.json"
    target.write_text("an older, world-readable export")
    target.chmod(0o644)
    importers.write_private(target, "plaintext history")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.read_text() == "plaintext history"
    assert [p.name for p in tmp_path.iterdir()] == ["old-export.json"]  # no temporary left


def test_an_export_to_a_folder_or_a_missing_folder_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="is a folder: give a file name"):
        importers.write_private(tmp_path, "x")
    with pytest.raises(ExportError, match="does not exist"):
        importers.write_private(tmp_path / "nodir" / "x.json", "x")
    assert [p.name for p in tmp_path.iterdir()] == []  # nothing written


def test_import_next_to_an_encrypted_history_needs_its_key(make_agent: MakeAgent, key: str) -> None:
    make_agent(key=key).ask("encrypted")
    keyless = make_agent()
    before = tree_bytes(keyless.folder)
    with pytest.raises(HistoryKeyRequiredError):
        importers.import_file(keyless, CHATGPT)
    assert tree_bytes(keyless.folder) == before
    assert len(importers.import_file(make_agent(key=key), CHATGPT).imported) == 2


def test_imported_names_are_one_line_of_limited_length(
    make_agent: MakeAgent, tmp_path: Path
) -> None:
    data = json.loads(CHATGPT.read_text())
    data[0]["title"] = "Line one\nline two\t" + "z" * 5000
    source = tmp_path / "conversations.json"
    source.write_text(json.dumps(data))
    agent = make_agent()
    result = importers.import_file(agent, source)
    name = next(n for _, n in result.imported if n.startswith("Line one"))
    assert name.startswith("Line one line two z") and len(name) == MAX_NAME
    assert name in {r.name for r in agent.conversations()}


# -- bounded walks, text that is not UTF-8, partial imports (issue 14: 2, 6) --------------------


def _chatgpt(tmp_path: Path, mapping: Mapping[str, object], **extra: object) -> Path:
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([{"title": "c", "mapping": mapping, **extra}]))
    return path


def _node(nid: str, parent: str | None, children: list[str], text: str = "hi") -> dict[str, object]:
    message = {"author": {"role": "user"}, "content": {"parts": [text]}}
    return {"id": nid, "parent": parent, "children": children, "message": message}


@pytest.mark.timeout(30)
def test_chatgpt_cycles_end_the_walk(make_agent: MakeAgent, tmp_path: Path) -> None:
    agent = make_agent()
    cycles = [
        {"a": _node("a", None, ["a"])},  # the reproduction: a node its own child
        {"r": _node("r", None, ["a"]), "a": _node("a", "r", ["b"]), "b": _node("b", "a", ["a"])},
        {"r": _node("r", None, ["x"]), "x": _node("r", "r", ["r"])},  # an "id" naming another
    ]
    for mapping in cycles:
        result = importers.import_file(agent, _chatgpt(tmp_path, mapping))
        assert len(result.imported) == 1 and not result.failed
    # a parent cycle from the current node (no root at all)
    looped = {"a": _node("a", "b", ["b"]), "b": _node("b", "a", ["a"], "there")}
    result = importers.import_file(agent, _chatgpt(tmp_path, looped, current_node="a"))
    [(cid, _)] = result.imported
    assert [m.content for m in agent.load(cid).history] == ["there", "hi"]


def test_a_lone_surrogate_in_an_import_is_repaired_with_a_notice(
    make_agent: MakeAgent, key: str, tmp_path: Path
) -> None:
    agent = make_agent(key=key)
    path = tmp_path / "conversations.json"
    first = {"title": "fine", "mapping": {"a": _node("a", None, [], "all good")}}
    second = {"title": "bad \\udfff", "mapping": {"a": _node("a", None, [], "x")}}
    text = json.dumps([first, second]).replace('"x"', '"x \\udfff y"')
    path.write_text(text.replace("bad \\\\udfff", "bad \\udfff"))
    result = importers.import_file(agent, path)
    assert [name for _, name in result.imported] == ["fine (imported)", "bad \ufffd (imported)"]
    assert not result.failed and len(result.notices) == 1
    assert "2 character(s)" in result.notices[0] and "\ufffd" in result.notices[0]
    cid = result.imported[1][0]
    assert agent.load(cid).history[0].content == "x \ufffd y"
    agent.sync_vectors()
    assert agent.search("x y", 5)


def test_an_import_says_what_was_not_imported(
    make_agent: MakeAgent, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from backends.conversations import files as files_module

    monkeypatch.setattr(files_module, "MAX_MESSAGES", 3)
    agent = make_agent()
    small = {"title": "small", "mapping": {"a": _node("a", None, [], "one")}}
    nodes = {f"n{i}": _node(f"n{i}", f"n{i - 1}" if i else None, [f"n{i + 1}"], f"m{i}")
             for i in range(5)}  # fmt: skip
    big = {"title": "big", "mapping": nodes, "current_node": "n4"}
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([small, big, small]))
    result = importers.import_file(agent, path)
    # the second "small" has the same messages as the first: skipped, and said
    assert [name for _, name in result.imported] == ["small (imported)"]
    assert result.duplicates == ["small"]
    [failed] = result.failed
    assert failed.startswith("big: ") and "5 messages, over the 3" in failed
    assert len(agent.conversations()) == 1
