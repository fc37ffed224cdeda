"""The commands' warnings on the terminal speak the user's language (issue 27).

``custodia sessions`` with Redis down printed "WARNING backends.multiagent: sessions L2
degraded, going on without it: …" to a Spanish user, and a missing model "WARNING
backends.models.registry: chat model gguf unavailable, using retrieval-only mode: …".
"""

from __future__ import annotations

import ast
import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends import failures, i18n, terminal_log
from backends.config import Config
from backends.models import registry
from backends.multiagent.health import LayerState
from tests.i18n_words import compile_catalogues, english_words

ROOT = Path(__file__).resolve().parents[2]
LEVELS = {"warning", "error", "critical", "exception"}


def _unmarked_log_calls() -> list[str]:
    """``log.warning("…")`` calls whose message is a bare string literal (never translated)."""
    out = []
    for path in sorted((ROOT / "backends").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in LEVELS
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id in ("log", "logger")
                and node.args
            ):
                continue
            first = node.args[0]
            if isinstance(first, ast.Constant) and first.value != "%s":
                out.append(f"{path.relative_to(ROOT)}:{node.lineno}: {first.value!r}")
    return out


def test_every_warning_the_backends_log_is_marked_for_translation() -> None:
    left = _unmarked_log_calls()
    assert not left, "log messages never translated:\n" + "\n".join(left)


@pytest.fixture
def spanish_terminal(capsys: pytest.CaptureFixture[str]) -> Iterator[None]:
    compile_catalogues()
    handler = terminal_log.TerminalHandler()
    root = logging.getLogger()
    root.addHandler(handler)
    i18n.install("es")
    try:
        yield
    finally:
        i18n.install("en")
        root.removeHandler(handler)


def test_a_degraded_layer_and_a_missing_model_are_warned_in_spanish(
    spanish_terminal: None, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    refused = ConnectionRefusedError(111, "Connection refused")
    LayerState("sessions L2 (redis)").fail(refused)
    config = Config(home=tmp_path, chat_model=f"gguf:{tmp_path / 'nowhere.gguf'}")
    choice = registry.create_chat_model(config.validated())
    assert choice.fallback_reason  # retrieval-only
    text = capsys.readouterr().err
    lines = text.strip().splitlines()
    assert len(lines) == 2, text
    assert all(line.startswith("custodia: aviso: ") for line in lines), text
    assert "backends." not in text and "WARNING" not in text, text
    assert "sesiones L2" in lines[0] and "la conexión fue rechazada" in lines[0], text
    assert "(detalles: " in lines[0], text  # the OS's own words, kept as details
    for line in lines:
        assert not english_words(failures.without_details(line).replace(str(tmp_path), " ")), line


def test_english_lines_are_as_before(capsys: pytest.CaptureFixture[str]) -> None:
    handler = terminal_log.TerminalHandler()
    logger = logging.getLogger("backends.multiagent")
    logger.addHandler(handler)
    try:
        LayerState("tickets (sqlite)").recover()
        LayerState("tickets (sqlite)").fail("gone")
    finally:
        logger.removeHandler(handler)
    err = capsys.readouterr().err
    assert "WARNING backends.multiagent: tickets (sqlite) degraded, going on without it: gone" in (
        err
    ), err
