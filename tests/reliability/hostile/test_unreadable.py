"""Issue 25, item 9: files the app cannot read are a message, never a traceback, and the
doctor checks what the tutor's turns need.

CI runs as root, and root reads a 0600 file whatever its owner, so each case is made in a way
that holds for root too: a folder where the file should be (the same ``OSError`` family as
``PermissionError``), and the tester's own case — a 0600 file owned by another user — with the
command run without root's power to read any file (``setpriv``), or with the file made 000
when the tests do not run as root.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from backends import cli
from backends.audit.service import CHECKPOINTS_FILE, KEYS_FILE, SIGNING_KEY_FILE
from backends.config import CONFIG_FILE

ROOT = Path(__file__).resolve().parents[3]
COMMANDS = (["doctor"], ["doctor", "--json"], ["audit", "verify"], ["memories", "list"])


def _env(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    for var in list(os.environ):
        if var.startswith("CUSTODIA_") and var != "CUSTODIA_REQUIRE_SERVERS":
            monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("CUSTODIA_HOME", str(home))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")


@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_a_settings_file_that_cannot_be_read_is_a_message_in_every_command(
    argv: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _env(monkeypatch, tmp_path)
    (tmp_path / CONFIG_FILE).mkdir()  # read as root too: IsADirectoryError
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert CONFIG_FILE in err and "cannot be read" in err
    assert "Traceback" not in err


def _without_file_override() -> list[str]:
    """The command prefix that takes root's power to read any file away (``setpriv``
    dropping CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH); nothing when not root."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: root reads any file")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


def test_another_users_0600_settings_file_is_a_message(tmp_path: Path) -> None:
    prefix = _without_file_override()
    settings = tmp_path / CONFIG_FILE
    settings.write_text('embedder = "hashing"\n', encoding="utf-8")
    if os.geteuid() == 0:
        nobody = pwd.getpwnam("nobody")
        os.chown(settings, nobody.pw_uid, nobody.pw_gid)  # another user's, 0600
        settings.chmod(0o600)
    else:
        settings.chmod(0o000)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "CUSTODIA_HOME": str(tmp_path),
        "CUSTODIA_EMBEDDER": "hashing",
        "CUSTODIA_CHAT_MODEL": "scripted",
        "QT_QPA_PLATFORM": "offscreen",
    }
    code = "import sys\nfrom backends import cli\nsys.exit(cli.main(sys.argv[1:]))"
    try:
        done = subprocess.run(
            [*prefix, sys.executable, "-c", code, "doctor"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        settings.chmod(0o600)
    assert done.returncode == 2, done.stderr
    assert "Permission denied" in done.stderr and CONFIG_FILE in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("name", [KEYS_FILE, SIGNING_KEY_FILE, CHECKPOINTS_FILE])
def test_doctor_checks_the_files_every_tutor_turn_needs(
    name: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _env(monkeypatch, tmp_path)
    assert cli.main(["doctor"]) == 0  # none of them yet: created on the first turn
    assert "Everything this configuration needs is usable" in capsys.readouterr().out
    (tmp_path / name).mkdir()  # cannot be opened for writing, even by root
    assert cli.main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert "Everything this configuration needs is usable" not in out
    failing = [line for line in out.splitlines() if "FAIL" in line]
    assert len(failing) == 1 and name in failing[0] and "clinical tutor" in failing[0]
