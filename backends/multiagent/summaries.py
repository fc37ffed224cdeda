"""A step check's summary in the user's language, read back from what is stored (issue 27).

The summaries of :mod:`~backends.multiagent.verify` ("1 of 3 tests failed", "not verifiable:
the tests define no test") are stored in English in the session's verification record, and
stay so: the record is data — the reviewer's prompt quotes it, :mod:`review` reads claims
against it, :func:`verify.session_status` takes it apart — and sessions stored before there
was a Spanish Custodia hold the same words. Where a summary is shown (the command, the tab,
the result) :func:`translate` matches it against the English it was made from and says it
again in the installed language; a part it does not know (a Python error's own text, a test's
name) is kept as it is, and English reads the stored text unchanged.
"""

from __future__ import annotations

import re
from functools import cache

from backends import i18n
from backends.i18n import N_, _

#: every English summary (and part of one) the check writes, as written: ``{name}`` a part
#: said again in the user's language when it is one of these too, ``{name}`` a number,
#: ``{name}`` kept as it is (a Python error, a test or package name). The more specific
#: first: the first that matches the whole text wins.
TEMPLATES: tuple[str, ...] = (
    # verify_step: a step that passed on its second attempt
    N_("{summary} (after one retry)"),
    # verify._judge: a run in the sandbox
    N_("{passed} of {total} tests passed"),
    N_("{failed} of {total} tests failed; killed at the {killed}"),
    N_("{failed} of {total} tests failed"),
    N_("{failed} of {total} tests could not run in the sandbox"),
    N_("the code fails when loaded: {error}"),
    N_("the code was killed while loading: {killed}"),
    N_("the code ended the process while loading"),
    N_("the test run stopped: {why}"),
    N_("killed at the {killed}"),
    N_("the process ended early"),
    N_("the tests define no test"),
    # verify.check
    N_("not verifiable: {why}"),
    N_("the code does not parse: {error} (line {line})"),
    N_("the code parses, but no tests were given or written"),
    N_("the code parses, but no tests were given and {missing}"),
    N_("{tests} do not call anything the code defines ({names})"),
    N_("nothing"),
    # verify.python_source: why there is no code to check
    N_("no code in the answer"),
    N_("code in {languages}, not Python: the sandbox runs Python only"),
    # checking: the tester was asked and wrote nothing that can run (verify.written_tests)
    N_("the tester was asked for them twice: {why}"),
    N_("the tester was asked for them: {why}"),
    N_("its answer was empty"),
    N_("its answer has no Python code"),
    N_("its tests do not parse: {error} (line {line})"),
    N_("its answer has no test_ function or assert (it wrote code, not tests)"),
    # where the tests came from (checking.py)
    N_("the tests you attached"),
    N_("the tests in the task"),
    N_("tests the tester wrote"),
    N_("the coder's own tests"),
    # the sandbox's refusals (its runner, sandbox.py) and why it stopped a run
    N_("the tests import `{name}` from {where}, not the code's `{own}`"),
    N_("the standard library"),
    N_("the installed package `{package}`"),
    N_("the tests call `{name}`, not the code's `{own}`"),
    N_("the tests use nothing the code defines"),
    N_("the tests were not run"),
    N_("no Python interpreter to run the code in (install python3)"),
    N_("time limit ({seconds} s)"),
    N_("CPU limit ({seconds} s)"),
    N_("file size limit ({mb} MB)"),
    N_("memory limit ({mb} MB)"),
    N_("signal {name}"),
    N_("killed"),
    N_("exit code {code}"),
    # a test the run stopped in (its output)
    N_("stopped: {why}"),
    N_("the process ended"),
)

#: the parts kept as they are: a Python error's own words, names from the code, a language
#: tag, numbers the sandbox wrote
RAW = frozenset({"error", "languages", "name", "own", "package", "seconds", "mb", "code"})
#: the parts that are counts (written as the language writes numbers)
NUMBERS = frozenset({"passed", "failed", "total", "line"})

_FIELD = re.compile(r"\{(\w+)\}")
_NUMBER, _ANY = r"-?\d+", r".+?"


@cache
def _compiled() -> tuple[tuple[re.Pattern[str], str], ...]:
    out = []
    for template in TEMPLATES:
        parts, last = [], 0
        for match in _FIELD.finditer(template):
            name = match.group(1)
            parts.append(re.escape(template[last : match.start()]))
            parts.append(f"(?P<{name}>{_NUMBER if name in NUMBERS else _ANY})")
            last = match.end()
        parts.append(re.escape(template[last:]))
        out.append((re.compile("".join(parts), re.DOTALL), template))
    return tuple(out)


def _part(name: str, value: str) -> str:
    if name in NUMBERS:
        return i18n.number(int(value))
    if name in RAW:
        return value
    return translate(value)


def translate(summary: str) -> str:
    """``summary`` (as the check stored it, in English) in the installed language; a text
    none of :data:`TEMPLATES` matches is returned as it is. English returns it unchanged."""
    if i18n.current() == i18n.DEFAULT or not summary:
        return summary
    for pattern, template in _compiled():
        match = pattern.fullmatch(summary)
        if match is not None:
            parts = {name: _part(name, value) for name, value in match.groupdict().items()}
            return _(template).format(**parts)
    return summary
