"""Issue 25, item 12: a byte that is not UTF-8 in a file name is printed as ``\\xff``, never as
``\\udcff`` — raw in a message, or already escaped by ``repr`` inside an ``OSError``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from backends.text import printable_message

ROOT = Path(__file__).resolve().parents[2]


def test_printable_message_shows_bytes_as_bytes() -> None:
    assert printable_message("caf\udcff.json: bad") == "caf\\xff.json: bad"
    assert printable_message("No such file: '/x/q\\udcff'") == "No such file: '/x/q\\xff'"
    assert printable_message("plain café") == "plain café"


@pytest.mark.parametrize(
    ("name", "content"),
    [(b"a\xffb.json", b"{"), (b"missing\xff.json", None)],
    ids=["in the message", "inside an OSError"],
)
def test_the_commands_print_an_undecodable_byte_as_itself(
    tmp_path: Path, name: bytes, content: bytes | None
) -> None:
    path = os.fsencode(tmp_path) + b"/" + name
    if content is not None:
        with open(path, "wb") as fh:
            fh.write(content)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CUSTODIA_")},
        "CUSTODIA_HOME": str(tmp_path / "home"),
        "CUSTODIA_EMBEDDER": "hashing",
        "CUSTODIA_CHAT_MODEL": "scripted",
        "LC_ALL": "C.UTF-8",
    }
    code = "import sys\nfrom backends import cli\nsys.exit(cli.main(sys.argv[1:]))"
    done = subprocess.run(
        [os.fsencode(sys.executable), b"-c", code.encode(), b"conversations", b"import", path],
        cwd=ROOT,
        env=env,
        capture_output=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stderr
    assert b"\\udc" not in done.stderr
    assert name.replace(b"\xff", b"\\xff") in done.stderr
