"""The language setting and the commands' language (SPEC AL4)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from backends import cli, config, i18n
from backends.errors import ConfigError
from tests.i18n_words import compile_catalogues


@pytest.fixture(scope="module", autouse=True)
def compiled() -> None:
    compile_catalogues()


@pytest.fixture(autouse=True)
def english_after() -> Iterator[None]:
    yield
    i18n.install("en")


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, "en"),
        ({"LANG": "es_ES.UTF-8"}, "es"),
        ({"LANG": "es_MX"}, "es"),
        ({"LANG": "fr_FR.UTF-8"}, "en"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({"LANG": "en_GB.UTF-8", "LC_MESSAGES": "es_AR.UTF-8"}, "es"),
        ({"LANG": "es_ES.UTF-8", "LC_ALL": "C"}, "en"),
        ({"LANGUAGE": "es:en", "LANG": "en_US.UTF-8"}, "es"),
    ],
)
def test_system_language_reads_the_locale_variables_as_gettext_does(
    environ: dict[str, str], expected: str
) -> None:
    assert i18n.resolve("system", environ) == expected


def test_a_named_language_wins_over_the_system() -> None:
    assert i18n.resolve("en", {"LANG": "es_ES.UTF-8"}) == "en"
    assert i18n.resolve("es", {"LANG": "en_US.UTF-8"}) == "es"
    assert i18n.resolve("system", {}, system="es_CL") == "es"


def test_language_setting_from_file_and_environment(tmp_path: Path) -> None:
    assert config.load({}, home=tmp_path).language == "system"
    (tmp_path / config.CONFIG_FILE).write_text('language = "es"\n', encoding="utf-8")
    assert config.load({}, home=tmp_path).language == "es"
    assert config.load({"CUSTODIA_LANGUAGE": "en"}, home=tmp_path).language == "en"
    with pytest.raises(ConfigError, match="language"):
        config.load({"CUSTODIA_LANGUAGE": "fr"}, home=tmp_path)


def test_the_language_is_saved_with_the_settings(tmp_path: Path) -> None:
    saved = config.update_file(tmp_path, lambda c: replace(c, language="es"))
    assert saved.language == "es"
    assert 'language = "es"' in (tmp_path / config.CONFIG_FILE).read_text(encoding="utf-8")


def _help(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    with pytest.raises(SystemExit):
        cli.build_parser().parse_args(argv)
    out = capsys.readouterr()
    return out.out + out.err


def test_custodia_help_in_spanish_has_no_english_left(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert cli.install_language({"CUSTODIA_LANGUAGE": "es", "CUSTODIA_HOME": str(tmp_path)}) == "es"
    text = _help(capsys, ["--help"])
    assert text.startswith("uso: custodia")
    for english in ("usage:", "options:", "show this help message", "positional arguments"):
        assert english not in text
    assert "opciones:" in text
    assert "muestra este mensaje de ayuda y sale" in text


def test_argparse_errors_in_spanish(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cli.install_language({"CUSTODIA_LANGUAGE": "es", "CUSTODIA_HOME": str(tmp_path)})
    text = _help(capsys, ["no-such-command"])
    assert "error:" in text  # "custodia: error: ..." reads the same in Spanish
    assert "elección no válida" in text
    assert "invalid choice" not in text


def test_english_is_unchanged(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cli.install_language({"CUSTODIA_LANGUAGE": "en", "CUSTODIA_HOME": str(tmp_path)})
    text = _help(capsys, ["--help"])
    assert text.startswith("usage: custodia")
    assert "show this help message and exit" in text


def test_a_bad_configuration_still_gets_the_language_asked_for(tmp_path: Path) -> None:
    (tmp_path / config.CONFIG_FILE).write_text("profile = 3\n", encoding="utf-8")
    env = {"CUSTODIA_LANGUAGE": "es", "CUSTODIA_HOME": str(tmp_path)}
    assert cli.install_language(env) == "es"
    assert argparse._("usage: ") == "uso: "  # type: ignore[attr-defined]


def test_every_command_help_in_spanish_has_no_english_placeholder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cli.install_language({"CUSTODIA_LANGUAGE": "es", "CUSTODIA_HOME": str(tmp_path)})
    text = _help(capsys, ["audit", "export", "--help"])
    assert "--output ARCHIVO" in text and "--since MOMENTO" in text
    assert "FILE" not in text and "TIME" not in text
    assert "desde este momento (incluido)" in text
    i18n.install("en")
    english = _help(capsys, ["audit", "export", "--help"])
    assert "--output FILE" in english and "from this time (inclusive)" in english


def _parsers(parser: argparse.ArgumentParser) -> Iterator[argparse.ArgumentParser]:
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):  # aliases: once
                yield from _parsers(sub)


def test_every_command_help_is_spanish(tmp_path: Path) -> None:
    from tests.i18n_words import english_words

    cli.install_language({"CUSTODIA_LANGUAGE": "es", "CUSTODIA_HOME": str(tmp_path)})
    left = []
    for parser in _parsers(cli.build_parser()):
        text = re.sub(r"-\n\s+", "-", parser.format_help())  # words wrapped at a hyphen
        # choices ({csv,jsonl}), option names (--user) and the commands' own names are typed
        # and `custodia audit check` is a command line
        text = re.sub(r"\{[^}]*\}|(?<!\w)--?[\w-]+|^\s+\S+(?=\s{2})|`[^`]*`", " ", text, flags=re.M)
        text = re.sub(r"(?m)^(uso: |usage: ).*$", lambda m: m.group(1), text)
        if words := english_words(text):
            left.append(f"{parser.prog}: {sorted(set(words))}")
    assert not left, "English left in the commands' help:\n" + "\n".join(left)


def test_a_command_speaks_spanish(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUSTODIA_HOME", str(tmp_path))
    monkeypatch.setenv("CUSTODIA_EMBEDDER", "hashing")
    monkeypatch.setenv("CUSTODIA_CHAT_MODEL", "scripted")
    monkeypatch.setenv("CUSTODIA_LANGUAGE", "es")
    assert cli.main(["memories", "list"]) == 0
    assert "(0 recuerdos)" in capsys.readouterr().err
    monkeypatch.setenv("CUSTODIA_PROFILE", "nube")
    assert cli.main(["memories", "list"]) == 2
    assert "error de configuración: el perfil: 'nube' no es ninguno de estos" in (
        capsys.readouterr().err
    )
    monkeypatch.setenv("CUSTODIA_LANGUAGE", "en")
    monkeypatch.delenv("CUSTODIA_PROFILE")
    assert cli.main(["memories", "list"]) == 0
    assert "(0 memories)" in capsys.readouterr().err


def _listed_commands(
    parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[str, ...]]:
    """Every command line the help lists, as the help prints its names (``custodia --help``,
    ``custodia ask --help``, ...)."""
    formatter = parser._get_formatter()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for shown in action._choices_actions:
                sub = action.choices[shown.dest]
                listed = formatter._format_action_invocation(shown).split(" (")[0]
                yield (*prefix, listed)
                yield from _listed_commands(sub, (*prefix, listed))


def test_every_command_the_spanish_help_lists_runs(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Issue 27 item 1: `custodia --help` listed `recuerdos`, which `custodia recuerdos list`
    refused (the commands' names went through the catalogue as placeholders do)."""
    cli.install_language({"CUSTODIA_LANGUAGE": "es", "CUSTODIA_HOME": str(tmp_path)})
    commands = list(_listed_commands(cli.build_parser()))
    assert ("memories", "list") in commands and ("ask", "memories") in commands
    refused = []
    for command in commands:
        with pytest.raises(SystemExit) as exited:
            cli.build_parser().parse_args([*command, "--help"])
        if exited.value.code != 0:
            refused.append(" ".join(command))
    capsys.readouterr()
    assert not refused, f"listed in the Spanish help but refused: {refused}"


def test_a_usage_error_names_the_placeholder_as_the_usage_does(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    cli.install_language({"CUSTODIA_LANGUAGE": "es", "CUSTODIA_HOME": str(tmp_path)})
    text = _help(capsys, ["recuerdos", "list"])
    assert "uso: custodia [-h] [--version] COMANDO" in text
    assert "argumento COMANDO: elección no válida: 'recuerdos'" in text
    assert "'memories'" in text and "COMMAND" not in text


@pytest.mark.parametrize(
    ("value", "decimals", "english", "spanish"),
    [
        (2048, 0, "2,048", "2048"),  # CLDR: Spanish marks groups from five digits on
        (12345, 0, "12,345", "12.345"),
        (22.0, 1, "22.0", "22,0"),
        (1234567.891, 2, "1,234,567.89", "1.234.567,89"),
        (-123456, 0, "-123,456", "-123.456"),
        (0.28, 2, "0.28", "0,28"),
    ],
)
def test_numbers_in_the_languages_format(
    value: float, decimals: int, english: str, spanish: str
) -> None:
    """Issue 27 item 3: "22.0 GB", "2,048 tokens" in a Spanish command."""
    assert i18n.number(value, decimals) == english == f"{value:,.{decimals}f}"
    i18n.install("es")
    assert i18n.number(value, decimals) == spanish
    assert i18n.number(value, decimals, language="en") == english
