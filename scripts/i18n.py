"""Custodia's translation catalogues: extract, compile, check.

    python scripts/i18n.py update   # new strings into the catalogues (lupdate; Babel)
    python scripts/i18n.py compile  # .ts -> .qm (lrelease), .po -> .mo (Babel), if out of date
    python scripts/i18n.py check    # fails on a string without a finished translation

Two catalogues, one per toolkit's mechanism:

* the window: ``resources/i18n/custodia_<lang>.ts`` (Qt Linguist), extracted from
  ``desktop/`` by PySide6's ``pyside6-lupdate`` (each ``tr()`` under its class's name), and
  compiled to ``.qm`` by ``pyside6-lrelease``;
* the commands and backend messages: ``resources/i18n/<lang>/LC_MESSAGES/custodia.po``
  (gettext), extracted by Babel from ``backends/`` (``_()``, ``ngettext()``, ``N_()``) and from
  the standard library's ``argparse`` (its own words: "usage:", "options:", ...), compiled
  to ``.mo`` by Babel.

``check`` extracts again (into memory) and fails when a string in the code is missing from a
catalogue, a translation is empty, unfinished (``type="unfinished"``, ``fuzzy``), or lost or
changed a placeholder (``%1``, ``%n``, ``{name}``, ``%s``, ``%(name)s``). ``make test`` runs it
(tests/backends/test_i18n_catalogues.py).
"""

from __future__ import annotations

import argparse
import io
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
I18N = ROOT / "resources" / "i18n"
LANGUAGES = ("es",)
DOMAIN = "custodia"
BIN = Path(sys.executable).parent
#: a Qt placeholder (%1..%99, %n, %L1) or a Python one ({0}, {name!r:>3}, %s, %(name)s, %d)
QT_PLACEHOLDER = re.compile(r"%L?\d{1,2}|%L?n")
BRACE_PLACEHOLDER = re.compile(r"(?<!\{)\{([A-Za-z_0-9]*)(![rsa])?(:[^{}]*)?\}(?!\})")
PERCENT_PLACEHOLDER = re.compile(r"%(\([A-Za-z_0-9]+\))?[-#0 +]*\d*(\.\d+)?[sdrifgxXeE%]")


def ts_path(language: str) -> Path:
    return I18N / f"{DOMAIN}_{language}.ts"


def qm_path(language: str) -> Path:
    return I18N / f"{DOMAIN}_{language}.qm"


def po_path(language: str) -> Path:
    return I18N / language / "LC_MESSAGES" / f"{DOMAIN}.po"


def mo_path(language: str) -> Path:
    return po_path(language).with_suffix(".mo")


def pot_path() -> Path:
    return I18N / f"{DOMAIN}.pot"


def desktop_sources() -> list[Path]:
    return sorted(
        p for p in (ROOT / "desktop").rglob("*.py") if "testing" not in p.relative_to(ROOT).parts
    )


def backend_sources() -> list[Path]:
    return sorted((ROOT / "backends").rglob("*.py"))


def _tool(name: str) -> str:
    path = BIN / name
    return str(path) if path.exists() else name


# -- the window: Qt Linguist ---------------------------------------------------------------
def lupdate(ts: Path, language: str) -> None:
    """Extract every ``tr()`` of the desktop into ``ts`` (kept translations stay; strings no
    longer in the code are dropped)."""
    subprocess.run(
        [
            _tool("pyside6-lupdate"),
            *(str(p.relative_to(ROOT)) for p in desktop_sources()),
            "-ts",
            str(ts),
            "-target-language",
            language,
            "-locations",
            "none",
            "-no-obsolete",
            "-silent",
        ],
        cwd=ROOT,
        check=True,
    )


def lrelease(ts: Path, qm: Path) -> None:
    subprocess.run(
        [_tool("pyside6-lrelease"), "-silent", str(ts), "-qm", str(qm)], cwd=ROOT, check=True
    )


@dataclass(frozen=True)
class Entry:
    """One message of a catalogue, as the check sees it."""

    context: str
    source: str
    translations: tuple[str, ...]
    unfinished: bool
    plural: bool = False

    def where(self) -> str:
        return f"[{self.context}] {self.source!r}"


def read_ts(path: Path) -> list[Entry]:
    out = []
    for context in ET.parse(path).getroot().iter("context"):
        name = context.findtext("name") or ""
        for message in context.iter("message"):
            translation = message.find("translation")
            assert translation is not None
            kind = translation.get("type", "")
            plural = message.get("numerus") == "yes"
            if plural:
                texts = tuple(f.text or "" for f in translation.iter("numerusform"))
            else:
                texts = (translation.text or "",)
            out.append(
                Entry(
                    context=name,
                    source=message.findtext("source") or "",
                    translations=texts,
                    unfinished=kind in ("unfinished", "vanished", "obsolete"),
                    plural=plural,
                )
            )
    return out


# -- the commands: gettext, through Babel ---------------------------------------------------
def extract() -> object:
    """A Babel catalogue of every message in ``backends/`` and argparse's own."""
    import argparse as stdlib_argparse

    from babel.messages.catalog import Catalog
    from babel.messages.extract import DEFAULT_KEYWORDS, extract_from_file

    # i18n.gettext_ too: for modules where `_` is already the throwaway variable
    keywords = {**DEFAULT_KEYWORDS, "gettext_": None}
    catalog = Catalog(project="Custodia", charset="utf-8", fuzzy=False)
    sources: list[tuple[Path, str]] = [(p, str(p.relative_to(ROOT))) for p in backend_sources()]
    sources.append((Path(stdlib_argparse.__file__), "<stdlib>/argparse.py"))
    for path, shown in sources:
        for lineno, message, comments, context in extract_from_file(
            "python",
            str(path),
            keywords=keywords,
            comment_tags=("TRANSLATORS:",),
            strip_comment_tags=True,
        ):
            catalog.add(
                message,
                None,
                [(shown, lineno)],
                auto_comments=comments,
                context=context,
            )
    return catalog


def write_po(catalog: object, path: Path) -> None:
    from babel.messages.pofile import write_po as babel_write_po

    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    babel_write_po(buffer, catalog, width=100, include_lineno=False, sort_output=True)
    path.write_bytes(buffer.getvalue())


def read_po(path: Path) -> object:
    from babel.messages.pofile import read_po as babel_read_po

    with path.open("rb") as f:
        return babel_read_po(f, locale=path.parents[1].name)


def pybabel_update(language: str) -> None:
    """Extract into the template, then merge it into the language's ``.po`` (new strings
    empty, changed ones marked fuzzy, vanished ones dropped)."""
    from babel.messages.catalog import Catalog

    template = extract()
    write_po(template, pot_path())
    po = po_path(language)
    if po.exists():
        catalog = read_po(po)
    else:
        catalog = Catalog(locale=language, project="Custodia", charset="utf-8")
    catalog.update(template, update_header_comment=False)  # type: ignore[attr-defined]
    catalog.obsolete.clear()  # type: ignore[attr-defined]
    write_po(catalog, po)


def po_entries(path: Path) -> list[Entry]:
    catalog = read_po(path)
    out = []
    for message in catalog:  # type: ignore[attr-defined]
        if not message.id:
            continue  # the header
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        out.append(
            Entry(
                context=message.context or "",
                source="\x00".join(ids),
                translations=tuple(strings),
                unfinished=message.fuzzy,
                plural=len(ids) > 1,
            )
        )
    return out


def pybabel_compile(po: Path, mo: Path) -> None:
    from babel.messages.mofile import write_mo

    catalog = read_po(po)
    buffer = io.BytesIO()
    write_mo(buffer, catalog, use_fuzzy=False)
    mo.write_bytes(buffer.getvalue())


# -- the check -------------------------------------------------------------------------------
def placeholders(text: str) -> list[str]:
    """The placeholders of ``text``, sorted (a translation may reorder them)."""
    found = QT_PLACEHOLDER.findall(text)
    found += ["{" + m.group(1) + (m.group(2) or "") + "}" for m in BRACE_PLACEHOLDER.finditer(text)]
    found += [m.group(0) for m in PERCENT_PLACEHOLDER.finditer(text) if m.group(0) != "%%"]
    return sorted(found)


def problems(entries: Iterable[Entry], expected: set[tuple[str, str]], name: str) -> Iterator[str]:
    """What is wrong with a catalogue: every string the code has must be there, translated,
    finished, with the source's placeholders."""
    seen = set()
    for entry in entries:
        seen.add((entry.context, entry.source))
        if entry.unfinished:
            yield f"{name}: unfinished: {entry.where()}"
            continue
        if not entry.translations or not all(t.strip() for t in entry.translations):
            yield f"{name}: not translated: {entry.where()}"
            continue
        sources = entry.source.split("\x00")
        for index, text in enumerate(entry.translations):
            source = sources[min(index, len(sources) - 1)]
            wanted = placeholders(source)
            if entry.plural and "%n" not in source and "%n" in text:
                wanted = sorted([*wanted, "%n"])
            got = placeholders(text)
            if entry.plural and len(sources) > 1:
                # gettext plurals: a form may leave the number out ("one" spelled out)
                wanted = [w for w in wanted if w not in ("%d", "%s")]
                got = [g for g in got if g not in ("%d", "%s")]
            if got != wanted:
                yield (f"{name}: placeholders {wanted} became {got} in {text!r}: {entry.where()}")
    for context, source in sorted(expected - seen):
        yield f"{name}: missing (run scripts/i18n.py update): [{context}] {source!r}"


def ts_expected(language: str) -> set[tuple[str, str]]:
    """Every (context, source) lupdate finds in the desktop now."""
    with tempfile.TemporaryDirectory() as folder:
        ts = Path(folder) / f"{DOMAIN}_{language}.ts"
        lupdate(ts, language)
        return {(e.context, e.source) for e in read_ts(ts)}


def po_expected() -> set[tuple[str, str]]:
    out = set()
    for message in extract():  # type: ignore[attr-defined]
        if message.id:
            ids = message.id if isinstance(message.id, tuple) else (message.id,)
            out.add((message.context or "", "\x00".join(ids)))
    return out


#: ways of calling tr() that lupdate reads under another context than Qt looks them up in
SOURCE_RULES = (
    (
        re.compile(r"\b\w+\s*=\s*(?:QCoreApplication|QApplication|app)\.translate\b(?!\s*\()"),
        "an alias of translate(): lupdate cannot see the strings passed to it",
    ),
    (
        re.compile(r"(?<![\w.])(?!self\b)([a-z_]\w*)\.tr\("),
        "tr() on another object: lupdate files it under that variable's name, Qt looks it up "
        "under the object's class (use QCoreApplication.translate(context, ...))",
    ),
)


def source_problems() -> list[str]:
    """Calls whose strings would be extracted under the wrong context, or not at all."""
    out = []
    for path in desktop_sources():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for rule, why in SOURCE_RULES:
                if rule.search(line):
                    out.append(f"{path.relative_to(ROOT)}:{number}: {why}")
    return out


def check(language: str) -> list[str]:
    found = source_problems()
    found += problems(read_ts(ts_path(language)), ts_expected(language), ts_path(language).name)
    found += problems(
        po_entries(po_path(language)), po_expected(), str(po_path(language).relative_to(I18N))
    )
    return found


def _stale(target: Path, source: Path) -> bool:
    return not target.exists() or target.stat().st_mtime < source.stat().st_mtime


def compile_all(force: bool = False) -> list[Path]:
    """Compile every catalogue whose compiled file is missing or older; return those made."""
    made = []
    for language in LANGUAGES:
        if force or _stale(qm_path(language), ts_path(language)):
            lrelease(ts_path(language), qm_path(language))
            made.append(qm_path(language))
        if force or _stale(mo_path(language), po_path(language)):
            pybabel_compile(po_path(language), mo_path(language))
            made.append(mo_path(language))
    return made


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("update", "compile", "check"))
    parser.add_argument("--force", action="store_true", help="compile even when up to date")
    args = parser.parse_args(argv)
    if args.command == "update":
        for language in LANGUAGES:
            lupdate(ts_path(language), language)
            pybabel_update(language)
            print(f"i18n: updated {ts_path(language).name} and {po_path(language).name}")
        return 0
    if args.command == "compile":
        for path in compile_all(args.force):
            print(f"i18n: compiled {path.relative_to(ROOT)}")
        return 0
    found = [p for language in LANGUAGES for p in check(language)]
    for problem in found:
        print(problem)
    print(f"i18n: {len(found)} problem(s)" if found else "i18n: every string translated")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
