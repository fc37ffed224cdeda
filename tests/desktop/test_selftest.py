"""``custodia --self-test``: every step runs, a missing assistant fails loudly, and the
user's data dir is never touched."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

import pytest

from backends.assistants import Assistant
from desktop import selftest
from desktop.cli import main as cli_main

STEP = re.compile(r"^\[(ok  |FAIL)\] (.+?)\s{2,}\s*\d+\.\d\d s  (.*)$")


def steps(output: str) -> dict[str, tuple[bool, str]]:
    found = {}
    for line in output.splitlines():
        match = STEP.match(line)
        if match:
            found[match.group(2).strip()] = (match.group(1) == "ok  ", match.group(3))
    return found


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Stands for the user's real data dir: the self-test must leave it alone."""
    home = tmp_path / "users-own-data"
    home.mkdir()
    (home / "memories.sqlite3").write_bytes(b"precious")
    monkeypatch.setenv("CUSTODIA_HOME", str(home))
    return home


def test_every_assistant_passes_its_turn(
    qapp: Any, tmp_path: Path, user_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home_dir = tmp_path / "login-home"  # $HOME: nothing may be written there either
    home_dir.mkdir()
    monkeypatch.setenv("HOME", str(home_dir))
    out = io.StringIO()
    code = selftest.run(out, tmp_path / "selftest", real_models=False)
    found = steps(out.getvalue())
    from backends import assistants

    expected = {f"tab {name}" for name in assistants.names()} | {
        "bundled files",
        "main window",
        "tab start-up work",
        "audit inspector",
        "multiagent turn",
        "memories turn",
        "conversations turn",
        "tutor turn",
        "audit chain",
        "close window",
    }
    assert expected <= set(found), out.getvalue()
    failed = {name: detail for name, (ok, detail) in found.items() if not ok}
    assert not failed, out.getvalue()
    assert code == 0
    assert "self-test passed" in out.getvalue()
    assert sorted(p.name for p in user_home.iterdir()) == ["memories.sqlite3"]
    assert (user_home / "memories.sqlite3").read_bytes() == b"precious"
    assert list(home_dir.iterdir()) == []


#: an assistant registered without a tab (the placeholder test's)
LATER = Assistant(name="later", title="Later", spec="XX1")


def test_a_placeholder_tab_fails_loudly(
    qapp: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, user_home: Path
) -> None:
    from backends import assistants

    assistants.register("later", f"{__name__}:LATER")  # declared, but no tab yet
    try:
        out = io.StringIO()
        code = selftest.run(out, tmp_path / "selftest", real_models=False)
    finally:
        assistants.unregister("later")
    found = steps(out.getvalue())
    assert code == 1
    assert found["later turn"][0] is False
    assert found["tab later"] == (
        False,
        "the later assistant has not landed: its tab is a placeholder",
    )
    assert "tab later" in out.getvalue().splitlines()[-1]  # named in the summary line


def test_own_temporary_data_dir_is_removed(qapp: Any, user_home: Path) -> None:
    out = io.StringIO()
    selftest.run(out, real_models=False)
    first = out.getvalue().splitlines()[0]
    data_dir = Path(first.split("data dir ", 1)[1])
    assert data_dir != user_home
    assert not data_dir.exists()
    assert sorted(p.name for p in user_home.iterdir()) == ["memories.sqlite3"]


@pytest.mark.model
def test_real_bundled_models_load(qapp: Any, tmp_path: Path, user_home: Path) -> None:
    test = selftest.SelfTest(io.StringIO(), tmp_path)
    assert test.step("embedder (MiniLM)", test.check_embedder), test.results[-1].detail
    assert test.step("chat model (SmolLM2)", test.check_chat_model), test.results[-1].detail


def test_cli_routes_self_test_to_the_window_module(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[bool] = []
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")  # app.run sets it when unset
    monkeypatch.setattr(selftest, "run", lambda: calls.append(True) or 0)
    assert cli_main(["--self-test"]) == 0
    assert calls == [True]


def test_the_app_icon_ships_in_resources(qapp: Any) -> None:
    icon = selftest.app_icon()
    assert not icon.isNull()
    assert icon.pixmap(64, 64).width() == 64
