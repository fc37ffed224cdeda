"""Nothing leaks: plaintext of encrypted history, secrets, file modes, the network.

One recorded journey through every assistant (tests/reliability/leaks/journey.py) and
several checks on it:

* the history marker of an encrypted conversation is nowhere in clear — not in the data dir
  (Chroma files, SQLite files and their WAL, the log), not in a temporary file, not in what a
  process killed mid-write leaves behind — in any of several encodings;
* the conversations key and the Postgres/Neo4j passwords are in no output and no log;
* every file of the data dir is 0600 and every folder 0700 (with the usual 022 umask);
* every socket address the journey touched is loopback (or a Unix socket), and the journey
  works with the network outside loopback blocked.
"""

from __future__ import annotations

import base64
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from backends.conversations.keys import generate_key
from tests.harness import netblock
from tests.reliability.conftest import Figures
from tests.reliability.leaks.journey import (
    HISTORY_MARKER,
    NEO4J_PASSWORD,
    POSTGRES_PASSWORD,
    Journey,
    run_journey,
)

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(scope="module")
def journey(tmp_path_factory: pytest.TempPathFactory) -> Journey:
    home = tmp_path_factory.mktemp("journey") / "home"
    home.mkdir(mode=0o700)
    done = run_journey(home, generate_key())
    failed = [(argv, code, err) for argv, code, _, err in done.outputs if code != 0]
    assert not failed, failed
    return done


def encodings(text: str) -> dict[str, bytes]:
    """How a text could sit in a file: UTF-8, UTF-16, JSON-escaped, base64, hex."""
    raw = text.encode("utf-8")
    core = text.split(" ")[0].encode("utf-8")  # the unusual token alone
    return {
        "utf-8": raw,
        "token": core,
        "utf-16-le": text.encode("utf-16-le"),
        "json": text.replace("'", "\\u0027").encode("utf-8"),
        "base64": base64.b64encode(raw)[:-4],
        "urlsafe-base64": base64.urlsafe_b64encode(raw)[:-4],
        "hex": raw.hex().encode("ascii"),
    }


def find(root: Path, text: str) -> list[str]:
    """``path (encoding)`` for every file under ``root`` holding ``text`` in some encoding."""
    needles = encodings(text)
    found = []
    for path in sorted(root.rglob("*")):
        try:
            if not path.is_file():
                continue
            data = path.read_bytes()
        except OSError:  # gone meanwhile (another process's temporary)
            continue
        found.extend(
            f"{path.relative_to(root)} ({name})" for name, n in needles.items() if n in data
        )
    return found


def test_encrypted_history_is_nowhere_in_clear(journey: Journey, figures: Figures) -> None:
    files = [p for p in journey.home.rglob("*") if p.is_file()]
    assert any(p.parent.name != "chroma" and "chroma" in str(p) for p in files)  # it was there
    assert not find(journey.home, HISTORY_MARKER)
    assert "zebra" not in journey.log_text
    for path in journey.new_temp_files:
        if journey.home not in path.parents:
            try:
                assert HISTORY_MARKER.encode() not in path.read_bytes(), path
            except OSError:
                continue
    figures.record(
        "leaks",
        "plaintext of encrypted history",
        files_scanned=len(files),
        encodings=len(encodings(HISTORY_MARKER)),
        found=0,
    )


def test_the_scan_finds_clear_text_where_it_is(journey: Journey) -> None:
    """The control: the memory (not encrypted, by design) is found by the same scan."""
    assert find(journey.home, "I am allergic to penicillin")


def test_a_process_killed_mid_write_leaves_no_clear_text(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    script = (
        "import sys\n"
        "from backends.cli import main\n"
        "for i in range(10_000):\n"
        f"    main(['ask', 'conversations', {HISTORY_MARKER!r} + ' ' + str(i)])\n"
    )
    env = dict(
        os.environ,
        CUSTODIA_HOME=str(home),
        CUSTODIA_EMBEDDER="hashing",
        CUSTODIA_CHAT_MODEL="scripted",
        CONVERSATIONS_KEY=generate_key(),
        PYTHONFAULTHANDLER="1",
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    folder = home / "conversations"
    while time.monotonic() < deadline and len(list(folder.glob("*.json"))) < 3:
        time.sleep(0.05)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    _, err = proc.communicate(timeout=30)
    assert len(list(folder.glob("*.json"))) >= 3, err.decode()[-2000:]
    assert not find(home, HISTORY_MARKER)
    assert HISTORY_MARKER.encode() not in err  # nothing dumped on the way down


def test_secrets_are_in_no_output_and_no_log(journey: Journey, figures: Figures) -> None:
    secrets = {
        "conversations key": journey.key,
        "postgres password": POSTGRES_PASSWORD,
        "neo4j password": NEO4J_PASSWORD,
    }
    for name, secret in secrets.items():
        assert secret not in journey.all_output, name
        assert secret not in journey.log_text, name
        assert not find(journey.home, secret), name
    figures.record("leaks", "secrets in outputs and logs", commands=len(journey.outputs), found=0)


def test_every_file_is_0600_and_every_folder_0700(journey: Journey, figures: Figures) -> None:
    wrong = []
    count = 0
    for path in [journey.home, *sorted(journey.home.rglob("*"))]:
        if path.is_symlink():
            continue
        count += 1
        mode = stat.S_IMODE(path.stat().st_mode)
        want = 0o700 if path.is_dir() else 0o600
        if mode & ~want:
            wrong.append(f"{path.relative_to(journey.home)}: {mode:o}")
    assert not wrong, f"{len(wrong)} of {count} paths too open: {wrong[:15]}"
    figures.record("leaks", "file modes", paths=count, too_open=0)


def test_every_connection_stays_on_this_machine(journey: Journey, figures: Figures) -> None:
    outside = []
    for operation, address in journey.addresses:
        host = address[0] if isinstance(address, tuple) and address else address
        if operation.endswith("AF_UNIX"):
            continue
        if host is None or netblock.is_loopback(host):
            continue
        outside.append((operation, address))
    assert not outside, outside
    assert journey.addresses  # the recorder saw the model discovery at least
    figures.record(
        "leaks",
        "network",
        addresses_recorded=len(journey.addresses),
        outside_loopback=0,
        network_blocked=netblock.is_installed(),
    )


def test_the_journey_ran_with_the_network_blocked(journey: Journey) -> None:
    assert netblock.is_installed()
    netblock.assert_network_blocked()


@pytest.mark.parametrize(
    "dsn",
    [
        f"postgresql://custodia_app:{POSTGRES_PASSWORD}@127.0.0.1:9/x",
        f"host=127.0.0.1 port=9 user=custodia_app password={POSTGRES_PASSWORD} dbname=x",
        f"mysql://custodia_app:{POSTGRES_PASSWORD}@127.0.0.1:9/x",  # refused: still hidden
        f"postgresql://custodia_app:{POSTGRES_PASSWORD}@[::1:9/x",  # not a URL: still hidden
    ],
)
def test_a_postgres_password_is_never_printed(
    dsn: str, home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whatever form the DSN takes — ``audit bootstrap`` prints the key=value form — and
    whether it is accepted or refused, its password appears in no message."""
    from backends import cli

    monkeypatch.setenv("CUSTODIA_HOME", str(home))
    monkeypatch.setenv("CUSTODIA_PROFILE", "server")
    monkeypatch.setenv("CUSTODIA_POSTGRES_DSN", dsn)
    for argv in (
        ["doctor", "--json"],
        ["audit", "verify"],
        ["storage"],
        ["migrate", "--to", "server", "--dry-run"],
    ):
        cli.main(argv)
        out, err = capsys.readouterr()
        assert POSTGRES_PASSWORD not in out + err, (argv, out + err)
    log = home / "custodia.log"
    assert not log.exists() or POSTGRES_PASSWORD not in log.read_text()


def test_the_dsn_audit_bootstrap_prints_is_accepted(home: Path) -> None:
    from backends import config

    dsn = "user=custodia_app dbname=x host=127.0.0.1 port=5432 password=abc"
    cfg = config.load({"CUSTODIA_POSTGRES_DSN": dsn, "CUSTODIA_PROFILE": "server"}, home=home)
    assert cfg.audit == "postgres" and cfg.postgres_dsn == dsn
    assert "abc" not in str(cfg.redacted())
