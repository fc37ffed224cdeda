from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

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
