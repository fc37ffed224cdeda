from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from backends import __version__


def _run(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")}
    env.update(CUSTODIA_HOME=str(home), CUSTODIA_EMBEDDER="hashing", CUSTODIA_CHAT_MODEL="scripted")
    return subprocess.run(
        [sys.executable, "-m", "desktop.cli", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )


def test_version(tmp_path: Path) -> None:
    result = _run("--version", home=tmp_path)
    assert result.returncode == 0
    assert result.stdout.strip() == f"custodia {__version__}"


def test_doctor_is_headless_and_does_not_import_qt(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")}
    env.update(
        CUSTODIA_HOME=str(tmp_path), CUSTODIA_EMBEDDER="hashing", CUSTODIA_CHAT_MODEL="scripted"
    )
    code = (
        "import sys; from desktop.cli import main; rc = main(['doctor']); "
        "assert 'PySide6' not in sys.modules, 'headless command imported Qt'; sys.exit(rc)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "embedder" in result.stdout and "hashing-384" in result.stdout


def test_unknown_command_is_usage_error(tmp_path: Path) -> None:
    result = _run("frobnicate", home=tmp_path)
    assert result.returncode == 2
    assert "invalid choice" in result.stderr


def test_a_reader_that_leaves_early_gets_no_traceback(tmp_path: Path) -> None:
    """`custodia doctor | head -1`: the pipe closes under the writer; it stops quietly."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")}
    env.update(
        CUSTODIA_HOME=str(tmp_path), CUSTODIA_EMBEDDER="hashing", CUSTODIA_CHAT_MODEL="scripted"
    )
    writer = subprocess.Popen(
        [sys.executable, "-m", "desktop.cli", "doctor", "--storage"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    assert writer.stdout is not None and writer.stderr is not None
    writer.stdout.readline()
    writer.stdout.close()  # the reader leaves after one line
    stderr = writer.stderr.read().decode()
    writer.wait(timeout=60)
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr, stderr


def test_parsers_built_again_and_again_stay_whole() -> None:
    """Each build has its own shared ``ask`` and ``reindex`` groups (an id() registry once
    handed a new parser a collected one's group: "conflicting subparser")."""
    import gc

    from backends import cli

    for _ in range(200):
        parser = cli.build_parser()
        args = parser.parse_args(["ask", "memories", "hi"])
        assert args.assistant == "memories"
        assert parser.parse_args(["reindex", "multiagent"]).index == "multiagent"
        del parser
        gc.collect()


def test_ctrl_c_while_the_commands_load_is_a_clean_interrupt(monkeypatch: Any, capsys: Any) -> None:
    from backends import cli

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert cli.main(["doctor"]) == 130
    assert capsys.readouterr().err.strip() == "custodia: interrupted"


# -- arguments that are not UTF-8 (issue 14 item 6) ------------------------------------------------

BAD = "caf\udce9"  # what Python makes of the bytes b"caf\xe9" in argv (surrogateescape)


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["ask", "memories", BAD], "MESSAGE"),
        (["memories", "add", BAD], "TEXT"),
        (["memories", "search", BAD], "QUERY"),
        (["memories", "delete", BAD], "TEXT"),
        (["ask", "tutor", BAD, "--user", "ana"], "QUESTION"),
        (["ask", "tutor", "What is gout?", "--user", BAD], "--user"),
        (["kb", "import", ".", "--user", BAD], "--user"),
        (["kb", "forget-user", BAD], "NAME"),
        (["forget", BAD], "PERSON"),
        (["ask", "conversations", BAD], "MESSAGE"),
        (["conversations", "search", BAD], "QUERY"),
        (["ask", "multiagent", "plan", BAD], "TASK"),
        (["audit", "export", "--format", "csv", "--pseudonym", BAD], "--pseudonym"),
        (["memories", "add", "lone \ud800 surrogate"], "TEXT"),
    ],
)
def test_an_argument_that_is_not_utf8_is_a_usage_error_naming_it(
    argv: list[str],
    named: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every command, before its handler runs: exit 2 naming the argument (were tracebacks)."""
    from backends import cli

    monkeypatch.setenv("CUSTODIA_HOME", str(tmp_path))
    try:
        code = cli.main(argv)
    except SystemExit as exit_:  # argparse refusing it in a type= check
        code = int(exit_.code or 0)
    err = capsys.readouterr().err
    assert code == 2, err
    assert named in err and ("0xE9" in err or "U+D800" in err), err
    assert "Traceback" not in err
    assert not (tmp_path / "memories.sqlite3").exists()  # nothing was opened, nothing written


def test_undecodable_bytes_on_a_real_command_line(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")}
    env.update(
        CUSTODIA_HOME=str(tmp_path), CUSTODIA_EMBEDDER="hashing", CUSTODIA_CHAT_MODEL="scripted"
    )
    result = subprocess.run(
        [sys.executable, "-m", "desktop.cli", "memories", "add", b"caf\xe9"],
        capture_output=True,
        env=env,
        timeout=60,
    )
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode == 2, err
    assert "argument TEXT: 'caf\\\\xe9' is not valid UTF-8" in err and "Traceback" not in err


def test_a_folder_import_reports_a_file_name_that_is_not_utf8(tmp_path: Path) -> None:
    """Issue 14 item 7 from the command line: a path argument may hold any bytes (it is a
    name); the other files are imported and the bad one is reported, escaped."""
    folder = os.path.join(os.fsencode(tmp_path), b"notes")
    os.mkdir(folder)
    with open(os.path.join(folder, b"good.md"), "w", encoding="utf-8") as fh:
        fh.write("# Ward A\n\nApixaban for AF on ward A.\n")
    with open(os.path.join(folder, b"caf\xe9.md"), "w", encoding="utf-8") as fh:
        fh.write("# Cafe\n\nCaffeine and sleep.\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")}
    env.update(
        CUSTODIA_HOME=str(tmp_path / "home"),
        CUSTODIA_EMBEDDER="hashing",
        CUSTODIA_CHAT_MODEL="scripted",
    )
    result = subprocess.run(
        [sys.executable, "-m", "desktop.cli", "kb", "import", folder, "--user", "ana"],
        capture_output=True,
        env=env,
        timeout=300,
    )
    out, err = result.stdout.decode(), result.stderr.decode("utf-8", "replace")
    assert result.returncode == 0, err
    assert "Traceback" not in err
    assert "caf\\xe9.md: the file name is not valid UTF-8" in err
    assert "Imported into ana's notes" in out and "1 added" in out, out


def test_backend_entry_points_refuse_text_that_is_not_unicode(tmp_path: Path) -> None:
    """The window passes text too: memories and tutor refuse it with a clear error (a
    :class:`~backends.errors.CustodiaEnvironmentError`), before anything is stored."""
    from backends.memories.service import MemoryAssistant
    from backends.models.chat import ScriptedChat
    from backends.models.embedders import HashingEmbedder
    from backends.text import InvalidTextError

    embedder = HashingEmbedder(64)
    memories = MemoryAssistant(tmp_path / "m.sqlite3", lambda: embedder, lambda: ScriptedChat())
    try:
        for call in (
            lambda: memories.remember(BAD),
            lambda: memories.update("x", BAD),
            lambda: memories.delete(BAD),
            lambda: memories.search(BAD),
            lambda: memories.find(BAD),
            lambda: memories.turn(f"remember that {BAD}"),
            lambda: memories.turn("hi \ud800"),
        ):
            with pytest.raises(InvalidTextError, match="not valid text"):
                call()
        assert memories.recent() == []
    finally:
        memories.close()
