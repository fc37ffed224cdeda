"""English UI words in a text meant to be Spanish: the word check the Spanish window and
commands are walked with (tests/desktop/test_i18n_window.py, tests/backends/test_i18n.py)."""

from __future__ import annotations

import re


def _words(text: str) -> list[str]:
    return text.split()


#: common English UI words that are not also Spanish words (so "no", "a", "error", "tutor",
#: "chat", "inspector", "local", "use", "has" are left out)
ENGLISH = frozenset(
    _words(
        """
    the and or of to is are be was were with without for from this that these those your you it
    its in on at by an as if then than not none all every each any some more less only also
    here there what which when where who why how will can cannot could would should has have
    had do does did done file files settings setting open save cancel help search new delete
    edit view tools tool about quit close add remove copy copied export import refresh send
    stop ask run running loading loaded ready unavailable available checking check theme light
    dark system shortcuts keyboard guide user show hide select found nothing question questions
    answer answers note notes sources source session sessions task tasks phase status event
    time date name size health profile memory memories conversation conversations model models
    store stores key keys storage map audit log clinical agent embedder retrieval only yes
    click press enter type write message messages start started finish finished failed
    cancelled stopped resume update undo rename filter verify migrate generate passphrase keep
    both dismiss got welcome tickets ticket feed result step held expires semantic similarity
    missing erased sealed unknown next last first back item items items page warning working
    planning reviewing phases data folder folders link linked unlinked copy default empty set
    used using shown recorded record records chain broken intact export exported importing
    exporting deleting deleted saved not should must
        """
    )
)

#: tokens that look like words but are names (products, formats, models) or identifiers
ALLOWED = frozenset(
    _words(
        """
    custodia qt pyside markdown json jsonl csv gguf ollama openai redis postgres neo4j qdrant
    chroma sqlite fernet minilm smollm instruct utc url uri dsn id pid p-
        """
    )
)

_PATH_OR_URL = re.compile(r"(?:[A-Za-z][\w+.-]*://\S+|\S*/\S+|\S+\.(?:toml|md|json|gguf|log)\b)")
#: an environment variable, an identifier, or a command's option as typed (``--passphrase``)
_IDENTIFIER = re.compile(
    r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b|\b\w+(?:_\w+)+\b|(?<![\w-])--[a-z][a-z0-9-]*"
)
_TAG = re.compile(r"<[^>]+>")
#: a word in any alphabet ("recordó" is one word, not "record"); hyphens and apostrophes join
_WORD = re.compile(r"[^\W_]+(?:[-'’][^\W_]+)*")
#: a configuration value or model key as typed in custodia.toml ("retrieval-only")
_KEY = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")


def english_words(text: str) -> list[str]:
    """The English UI words in ``text`` (HTML, paths, URLs and identifiers left out)."""
    text = _TAG.sub(" ", text).replace("&nbsp;", " ").replace("&", "")
    text = _IDENTIFIER.sub(" ", _PATH_OR_URL.sub(" ", text))
    out = []
    for token in _WORD.findall(text):
        if _KEY.fullmatch(token) or any(c.isdigit() for c in token):  # GPT4All, 384-d
            continue
        for word in re.split(r"[-'’]", token):
            if word.lower() in ENGLISH and word.lower() not in ALLOWED:
                out.append(word)
    return out


def compile_catalogues() -> None:
    """Compile the catalogues that are missing or older than their .ts/.po (``make test``
    does it first; a test run on its own needs it too)."""
    import importlib.util
    import sys
    from pathlib import Path

    name = "custodia_i18n_tool"
    tool = sys.modules.get(name)
    if tool is None:
        path = Path(__file__).resolve().parents[1] / "scripts" / "i18n.py"
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        tool = importlib.util.module_from_spec(spec)
        sys.modules[name] = tool
        spec.loader.exec_module(tool)
    tool.compile_all()
