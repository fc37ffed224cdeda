"""Both translation catalogues are complete (SPEC AL4): every visible string of the window
(``tr()``, extracted by pyside6-lupdate) and every message of the commands (``_()``, extracted
by Babel, argparse's own words included) has a finished Spanish translation that keeps its
placeholders. Fix a failure with ``python scripts/i18n.py update``, translate, ``compile``."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def i18n_tool() -> ModuleType:
    """scripts/i18n.py, imported by path (scripts/ is not a package)."""
    name = "custodia_i18n_tool"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / "i18n.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.timeout(120)
def test_every_string_has_a_finished_spanish_translation() -> None:
    problems = i18n_tool().check("es")
    assert not problems, "\n".join(problems)


def test_the_check_catches_what_it_must() -> None:
    tool = i18n_tool()
    entry = tool.Entry
    expected = {("C", "Open {0}"), ("C", "%n file(s)"), ("C", "Save %1"), ("C", "gone")}
    entries = [
        entry("C", "Open {0}", ("Abrir {name}",), False),  # placeholder changed
        entry("C", "%n file(s)", ("%n archivo", "archivos"), False, plural=True),  # %n lost
        entry("C", "Save %1", ("",), False),  # empty
        entry("C", "Extra", ("Extra",), True),  # unfinished
    ]
    found = "\n".join(tool.problems(entries, expected, "x.ts"))
    assert "placeholders ['{0}'] became ['{name}']" in found
    assert "placeholders ['%n'] became []" in found
    assert "not translated: [C] 'Save %1'" in found
    assert "unfinished: [C] 'Extra'" in found
    assert "missing (run scripts/i18n.py update): [C] 'gone'" in found


def test_placeholders_python_and_qt() -> None:
    placeholders = i18n_tool().placeholders
    assert placeholders("%(prog)s: error: %(message)s\n") == ["%(message)s", "%(prog)s"]
    assert placeholders("{0} of {1:.2f} ({name!r}) %1 %n 100%%") == sorted(
        ["{0}", "{1}", "{name!r}", "%1", "%n"]
    )
    assert placeholders("{{literal}}") == []


def test_compiled_catalogues_load() -> None:
    tool = i18n_tool()
    tool.compile_all()
    from backends import i18n

    try:
        i18n.install("es")
        assert i18n.gettext_("usage: ") == "uso: "
    finally:
        i18n.install("en")


def test_the_check_finds_calls_lupdate_reads_under_another_context() -> None:
    rules = i18n_tool().SOURCE_RULES
    flagged = [
        line
        for line in (
            "    tr = QCoreApplication.translate",
            '    label.setText(window.tr("Storage map"))',
            '    label.setText(self.tr("Storage map"))',
            '    title = QCoreApplication.translate("tabs", title)',
        )
        if any(rule.search(line) for rule, _why in rules)
    ]
    assert flagged == [
        "    tr = QCoreApplication.translate",
        '    label.setText(window.tr("Storage map"))',
    ]
