"""The coordinator: expert agents taking a task through planning → working → reviewing → done.

* the **planner** breaks the task into steps; each step becomes a ticket (MA8) handed to a
  specialist — the **coder** or the **researcher**;
* each specialist does its step and hands its ticket to the **reviewer**;
* a step that wrote Python is **checked** (:mod:`backends.multiagent.verify`): its tests — the
  user's, the task's, the coder's own, else the **tester**'s — run in a sandbox; a step that
  fails is retried once with the failure as feedback;
* the **reviewer** judges the results and writes the final answer.

A finished session is never just "done": it is ``verified``, ``failed verification`` or an
``unverified draft`` (``data["verification"]``, shown by the tab and the CLI).

Every expert is a system prompt plus the configured :class:`~backends.models.chat.ChatModel`.
Before acting it retrieves related items from semantic memory (MA10); after acting it stores
its result there, so past work feeds the next task. Every step is an event, kept in the
session and published on the live feed (MA9). Work already done is recorded in the session,
so a cancelled, failed or interrupted session resumes where it stopped.
"""

from __future__ import annotations

import ast
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from backends.answers import WITHHELD, Shown, echoed_scaffolding
from backends.errors import (
    CancelledError,
    CustodiaEnvironmentError,
    DimensionMismatchError,
    ModelUnavailableError,
    StoreUnavailableError,
)
from backends.grounding import split_sentences
from backends.i18n import _
from backends.models.chat import ChatModel, Prompt
from backends.multiagent.events import Feed
from backends.multiagent.health import LayerState
from backends.multiagent.runlock import RunLock, RunLocks, SessionBusyError
from backends.multiagent.runlock import SessionRunningError as SessionRunningError  # re-exported
from backends.multiagent.sandbox import Limits, NetworkChoice
from backends.multiagent.sessions import SessionStore
from backends.multiagent.tickets import Ticket, TicketBoard
from backends.multiagent.verify import (
    FAILED,
    LABELS,
    UNVERIFIED,
    VERIFIED,
    Attempt,
    asks_for_tests,
    check,
    code_blocks,
    find_tests,
    python_source,
    session_status,
    split_tests,
    written_tests,
)
from backends.progress import Progress
from backends.stores.sessions import ACTIVE_PHASES, Session
from backends.stores.vectors import MemoryHit, MemoryItem, SemanticMemory, tags_where

log = logging.getLogger(__name__)

EventCallback = Callable[[dict[str, Any]], None]
MemoryProvider = Callable[[], SemanticMemory]

#: event kinds
SESSION_STARTED = "session_started"
PHASE = "phase"
RETRIEVED = "retrieved"
EXPERT_STARTED = "expert_started"
EXPERT_RESULT = "expert_result"
TICKET = "ticket"
WARNING = "warning"
SESSION_FINISHED = "session_finished"  # last event of a run, whatever the outcome
VERIFYING = "verifying"  # a step's code goes to the sandbox
VERIFICATION = "verification"  # what the sandbox found (``verification``: the attempt)
RETRY = "retry"  # a step that failed its check is done again with the failure
#: a step's check is over
_CHECKED = (VERIFIED, FAILED, UNVERIFIED)
#: the reviewer's token budget, in steps' budgets: its final answer must not stop mid-line
REVIEW_BUDGET = 3


@dataclass(frozen=True)
class RunState:
    """What is happening to an unfinished session right now.

    ``running``: this process runs it; ``running elsewhere``: another live process holds its
    run lock (``pid``); ``interrupted``: it stopped in an active phase and nobody runs it
    (a killed process, a crash) — resumable. The CLI and the tab both show this.
    """

    kind: Literal["running", "running elsewhere", "interrupted"]
    pid: int | None = None

    @property
    def label(self) -> str:
        if self.kind == "running elsewhere":
            who = f"pid {self.pid}" if self.pid is not None else "pid unknown"
            return f"running in another process, {who}"
        return self.kind


@dataclass(frozen=True)
class Expert:
    name: str
    system: str
    #: collections searched before acting
    reads: tuple[str, ...]
    #: collections its result is stored in
    writes: tuple[str, ...]
    #: reads only verified work (:data:`EXAMPLES`): a coder copies what it is shown
    verified_only: bool = False


EXPERTS: dict[str, Expert] = {
    "planner": Expert(
        "planner",
        "You are the planner of a small team (a coder and a researcher). Break the user's "
        "task into at most three short, concrete steps. Write one step per line, starting "
        "with who does it: 'coder:' for a step that writes or changes code, 'researcher:' "
        "for any other step. Nothing else.",
        reads=("session_memory", "agent_results"),
        writes=("agent_results",),
    ),
    "coder": Expert(
        "coder",
        "You are the coder. Do the step you are given for the task: write the code or the "
        "exact commands, briefly explained. Be concise. Write Python in one ```python block, "
        "with a few test_ functions that assert what it must do.",
        reads=("code_patterns", "agent_results"),
        writes=("agent_results", "code_patterns"),
        verified_only=True,
    ),
    "researcher": Expert(
        "researcher",
        "You are the researcher. Do the step you are given for the task: gather the facts, "
        "options and trade-offs needed, briefly. Be concise.",
        reads=("agent_results", "session_memory"),
        writes=("agent_results",),
    ),
    "tester": Expert(
        "tester",
        "You are the tester. Write pytest tests for the code you are given: a few test_ "
        "functions with assert statements that check what the task asks for. Only the tests, "
        "in one ```python block; do not repeat the code.",
        reads=(),
        writes=(),
        verified_only=True,
    ),
    "reviewer": Expert(
        "reviewer",
        "You are the reviewer. Check the team's results against the task: say what is right, "
        "what is missing, then give the final answer in a few sentences.",
        reads=("agent_results",),
        writes=("agent_results", "session_memory"),
    ),
}

#: the collection that holds code only when it passed its check (a coder's examples)
CODE_PATTERNS = "code_patterns"
#: what an expert with ``verified_only`` may be shown: an item stored with its check's status
#: ``verified``. Failed and unverified work, and items from before statuses were stored (no
#: ``status``: unverified), never match — the filter is inside the query, not applied after.
EXAMPLES: dict[str, str] = {"status": VERIFIED}

#: words that make a step code work on their own (a "test", "class", "fix", "query", "method"
#: or "program" is as often about medicine, school or a plan: they do not count alone)
_CODE_WORDS = re.compile(
    r"\b(code|coding|coded|implement\w*|functions?|scripts?|scripting|programming|"
    r"refactor\w*|python|javascript|typescript|java|rust|golang|c\+\+|sql|regex(?:es)?|"
    r"compile\w*|debug\w*|algorithms?|unit[- ]tests?|api endpoints?|source files?|"
    r"command[- ]line|shell commands?|bash)\b",
    re.IGNORECASE,
)
#: the planner's label for who does a step: "coder: …", "[researcher] …", "(coder) …"
_ROLE = re.compile(
    r"^\s*(?:\*\*)?[\[(]?(coder|researcher)[\])]?(?:\*\*)?\s*(?:[:\-–—]\s*|\s+(?=\S))",
    re.IGNORECASE,
)
_ROLE_AFTER = re.compile(r"\s*[\[(](coder|researcher)[\])]\s*$", re.IGNORECASE)
_FENCE = re.compile(r"```.*?```", re.DOTALL)
_BULLET = re.compile(r"^\s*(?:(?:[-*•#]+|\(?\d+[.):]|step\s*\d+\s*[:.)-]?)\s*)+", re.IGNORECASE)


def parse_plan(text: str, task: str, max_steps: int = 3) -> list[str]:
    """The planner's steps: its numbered or bulleted lines (else its plain lines), code
    blocks and "Here is the plan:" lines left out; the task itself when nothing is left.

    Small local models often answer with code instead of a plan: then the task is one step.
    """
    prose = _FENCE.sub("\n", text)
    if "```" in prose:  # an unterminated block (the answer was cut at max_tokens)
        prose = prose[: prose.index("```")]
    return [title for title, _expert in plan_steps(text, task, max_steps)]


def plan_steps(text: str, task: str, max_steps: int = 3) -> list[tuple[str, str]]:
    """The planner's steps with who does each: the plan's own label ("coder: …",
    "researcher: …") when it gives one, else :func:`assign`; see :func:`parse_plan`."""
    prose = _FENCE.sub("\n", text)
    if "```" in prose:  # an unterminated block (the answer was cut at max_tokens)
        prose = prose[: prose.index("```")]
    listed: list[tuple[str, str]] = []
    plain: list[tuple[str, str]] = []
    for line in prose.splitlines():
        step = _BULLET.sub("", line).strip()
        role = _ROLE.match(step) or _ROLE_AFTER.search(step)
        if role is not None:
            step = (step[: role.start()] + step[role.end() :]).strip()
        step = _BULLET.sub("", step).strip().strip("*").strip()
        if len(step) < 3 or step.endswith(":"):
            continue
        step = step[:240]
        expert = role.group(1).lower() if role is not None else assign(step, 0)
        (listed if _BULLET.match(line) else plain).append((step, expert))
    steps = listed or plain
    return steps[:max_steps] or [(task[:240], assign(task, 1))]


def assign(step: str, index: int) -> str:
    """Coder for a step that is about code (:data:`_CODE_WORDS`), researcher for the rest.
    Only for a step the planner did not label."""
    return "coder" if _CODE_WORDS.search(step) else "researcher"


_SENTENCE_END = re.compile(r"[.!?…)\]`\"'»”:;]\s*$")


def complete_text(text: str) -> tuple[str, bool]:
    """``text`` without a last sentence cut off by the token limit; True when cut.

    A text that ends a sentence (or a list item, a code block) is whole. Otherwise it is cut
    back to the end of its last whole sentence or line, unless that would drop most of it.
    """
    text = text.rstrip()
    if not text or _SENTENCE_END.search(text) or text.endswith("```"):
        return text, False
    if _BULLET.match(text.rsplit("\n", 1)[-1]):
        return text, False  # a list's last item: lists often end without a full stop
    ends = [m.end() for m in re.finditer(r"[.!?…](?=\s)|\n", text)]
    if ends and ends[-1] >= len(text) // 3:
        return text[: ends[-1]].rstrip(), True
    return text + "…", True


def assemble_result(session: Session) -> str:
    """The session's result as Markdown: the task, the reviewer's answer, then each step's
    work, in plan order — what the result pane shows, copies and exports."""
    data = session.data
    lines = [f"# {session.task.strip()}", ""]
    lines += verification_markdown(session)
    review = str(data.get("review") or "").strip()
    if review:
        review, cut = complete_text(review)
        record = data.get("verification")
        status = record.get("status") if isinstance(record, dict) else None
        headings: dict[str, str] = {
            FAILED: "## Answer — the reviewer's words; the code failed its check",
            UNVERIFIED: "## Answer — the reviewer's words, unchecked",
        }
        shown, withheld = guard_review(review, str(status or UNVERIFIED), steps=data.get("steps"))
        lines += [headings.get(str(status), "## Answer"), ""]
        lines += [shown or _("*(Nothing of the reviewer's words can be shown: see below.)*"), ""]
        if withheld:
            lines.append(_("*Withheld from the reviewer's words:*"))
            lines += [f"- ~~{_md_line(s.text)}~~ — {s.reason}" for s in withheld]
            lines.append("")
        if cut:
            lines += [
                "*(The reviewer's answer reached the length limit; cut at its last "
                "complete sentence.)*",
                "",
            ]
    steps = list(data.get("steps") or [])
    if steps:
        lines += ["## Steps", ""]
    for step in steps:
        title = str(step.get("title", "")).strip()
        lines += [f"### {step.get('index', '?')}. {title} — {step.get('expert', '')}", ""]
        result = step.get("result")
        if result is None:
            lines += ["*(not done yet)*", ""]
        else:
            lines += [str(result).strip() or "*(no text)*", ""]
        check = step.get("verification")
        if isinstance(check, dict) and check.get("status") in _CHECKED:
            lines += [f"*Check: {LABELS[check['status']]} — {check.get('summary', '')}*", ""]
    if not review and session.phase != "done":
        lines += [f"*(Session {session.phase}: no final answer yet.)*", ""]
    return "\n".join(lines).rstrip() + "\n"


_MARKS = {"passed": "✓", "failed": "✗", "error": "⚠", "skipped": "–"}

#: the team's own prompt scaffolding (:meth:`Coordinator._review`, the retry, the memory
#: context), which a small reviewer copies back: "- [coder] step 2 (…):", "Check: …"
_TEAM_SCAFFOLDING = re.compile(
    r"\[(?:planner|coder|researcher|tester|reviewer)\]\s*step\s*\d+"
    r"|^\s*(?:[-*]\s*)?(?:check|results|task|your step\s*\(\d+\)|your previous answer)\s*:"
    r"|\bit failed its check\b|\[(?:agent_results|code_patterns|session_memory)\b",
    re.IGNORECASE | re.MULTILINE,
)
#: a sentence's claim about the code's check, by the status it claims
_CLAIMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        UNVERIFIED,
        re.compile(
            r"\bunverified\b|\bnot\s+(?:been\s+)?(?:verified|checked|tested)\b"
            r"|\bcould\s+not\s+be\s+(?:checked|verified)\b",
            re.IGNORECASE,
        ),
    ),
    (
        FAILED,
        re.compile(
            r"\bfailed\s+(?:its\s+|the\s+)?(?:verification|check|tests?)\b"
            r"|\btests?\s+(?:have\s+)?failed\b|\bfails?\s+(?:its|the|all)\s+tests?\b",
            re.IGNORECASE,
        ),
    ),
    (
        VERIFIED,
        re.compile(
            r"(?<![-\w])verified\b|\b(?:all\s+)?(?:the\s+|its\s+)?tests?\s+(?:all\s+)?pass"
            r"(?:es|ed)?\b|\bpass(?:es|ed)?\s+(?:all\s+)?(?:its|the|all)\s+tests?\b"
            r"|\b(?:works|runs)\s+correctly\b",
            re.IGNORECASE,
        ),
    ),
)


def _claims(sentence: str) -> set[str]:
    """The statuses ``sentence`` claims for the code ("verified", "tests passed" …)."""
    found: set[str] = set()
    rest = sentence
    for status, pattern in _CLAIMS:  # "unverified" first, so its "verified" is not counted
        if pattern.search(rest):
            found.add(status)
            rest = pattern.sub(" ", rest)
    return found


def _md_line(text: str) -> str:
    return " ".join(text.replace("`", "'").replace("~", "-").split())[:300]


def guard_review(
    review: str, status: str, steps: Iterable[dict[str, Any]] | None = None
) -> tuple[str, list[Shown]]:
    """The reviewer's words that may be shown, and those withheld with why (issue 24).

    The answer policy's parroting guard (:func:`backends.answers.echoed_scaffolding`) with the
    team's own scaffolding: a sentence that copies the prompt ("- [coder] step 2 (…)",
    "Check: …"), or claims a check the record does not hold ("verified" over an unverified
    draft; "the tests pass" over failed code), is withheld; so is code that no step wrote
    (nothing checked it — the steps' own code is shown below them, with its check).
    """
    written = {
        _norm_code(b.source) for s in steps or [] for b in code_blocks(str(s.get("result") or ""))
    }
    kept: list[str] = []
    withheld: list[Shown] = []
    label = LABELS.get(status, status)
    for kind, text in _review_segments(review):
        if kind == "code":
            if _norm_code(text) in written:
                kept.append(f"```python\n{text.strip(chr(10))}\n```")
            else:
                first = next((x.strip() for x in text.splitlines() if x.strip()), "")
                reason = _("code no step wrote: nothing checked it (each step's code is below)")
                withheld.append(Shown(f"{first} …", WITHHELD, reason=reason))
            continue
        out_lines: list[str] = []
        for line in text.split("\n"):
            sentences = split_sentences(line)
            bad: list[Shown] = []
            for sentence in sentences:
                echoed = echoed_scaffolding(sentence) or _echoed_team(sentence, line)
                wrong = _claims(sentence) - {status}
                if echoed:
                    reason = _("it copies the prompt (“{0}”)").format(echoed)
                    bad.append(Shown(sentence, WITHHELD, reason=reason))
                elif wrong:
                    reason = _("it claims the code is {0}; the check found: {1}").format(
                        LABELS[sorted(wrong)[0]], label
                    )
                    bad.append(Shown(sentence, WITHHELD, reason=reason))
            withheld += bad
            if not bad:
                out_lines.append(line)
            elif len(bad) < len(sentences):
                dropped = {b.text for b in bad}
                out_lines.append(" ".join(s for s in sentences if s not in dropped))
        kept.append("\n".join(out_lines).strip("\n"))
    shown = "\n\n".join(k for k in kept if k.strip())
    return shown.strip(), withheld


def _echoed_team(sentence: str, line: str) -> str:
    match = _TEAM_SCAFFOLDING.search(sentence) or (
        _TEAM_SCAFFOLDING.search(line) if line.lstrip().startswith(sentence[:12]) else None
    )
    return match.group(0).strip() if match else ""


def _norm_code(source: str) -> str:
    return "\n".join(line.rstrip() for line in source.strip("\n").splitlines())


_FENCE_MID_LINE = re.compile(r"^(.*?\S)[ \t]*(```+[\w+#.-]*)[ \t]*$", re.MULTILINE)
_BLOCK = re.compile(r"^[ \t]*```[^\n]*\n.*?(?:^[ \t]*```[ \t]*$|\Z)", re.DOTALL | re.MULTILINE)


def _fence_own_line(match: re.Match[str]) -> str:
    """An opening fence after words moved to its own line (an odd number of backticks
    before it would make it the end of an inline span instead)."""
    if match.group(1).count("`") % 2:
        return match.group(0)
    return f"{match.group(1)}\n{match.group(2)}"


def _review_segments(text: str) -> list[tuple[str, str]]:
    """``text`` as prose and fenced code, in order; a fence opened after some words on the
    same line ("… step 2 (…): ```python") opens a block too (the small model writes that)."""
    text = _FENCE_MID_LINE.sub(_fence_own_line, text)
    out: list[tuple[str, str]] = []
    last = 0
    for match in _BLOCK.finditer(text):
        if text[last : match.start()].strip():
            out.append(("prose", text[last : match.start()]))
        body = match.group(0)
        inner = re.sub(r"\A[ \t]*```[^\n]*\n|\n?[ \t]*```[ \t]*\Z", "", body)
        out.append(("code", inner))
        last = match.end()
    if text[last:].strip():
        out.append(("prose", text[last:]))
    return out


def verification_markdown(session: Session) -> list[str]:
    """The "what was verified" section: the status, then each checked step's tests with their
    outcome, the failures' output, and the sandbox's limits. Empty before the run ends."""
    record = session.data.get("verification")
    if session.phase != "done" or not isinstance(record, dict):
        return []
    status = str(record.get("status") or UNVERIFIED)
    lines = [f"## {LABELS.get(status, status).capitalize()}", "", f"{record.get('summary', '')}."]
    if status == UNVERIFIED:
        lines[-1] += " Nothing here was run: read it as the model's draft."
    lines.append("")
    for step in session.data.get("steps") or []:
        check = step.get("verification")
        if not isinstance(check, dict) or check.get("status") not in _CHECKED:
            continue
        attempts = list(check.get("attempts") or [])
        head = f"**Step {step.get('index')}** ({step.get('expert')}): "
        lines += [head + f"{LABELS[check['status']]} — {check.get('summary', '')}", ""]
        for attempt in attempts:
            if len(attempts) > 1:
                lines += [f"Attempt {attempt.get('attempt')}: {attempt.get('summary', '')}", ""]
            if attempt.get("tests_from"):
                limits = attempt.get("limits") or {}
                lines += [
                    f"Tests: {attempt['tests_from']}; sandbox: no network "
                    f"({attempt.get('network')}), {limits.get('wall_seconds', '?')} s, "
                    f"{limits.get('memory_mb', '?')} MB, {attempt.get('seconds', 0):.2f} s",
                    "",
                ]
            for test in attempt.get("tests") or []:
                mark = _MARKS.get(str(test.get("outcome")), "?")
                lines.append(f"- {mark} `{test.get('name')}` — {test.get('outcome')}")
            if attempt.get("tests"):
                lines.append("")
            failures = [t for t in attempt.get("tests") or [] if t.get("outcome") != "passed"]
            output = "\n\n".join(
                f"{t['name']}:\n{t['output']}" for t in failures if t.get("output")
            ) or str(attempt.get("output") or "")
            if output.strip() and attempt.get("status") != VERIFIED:
                lines += ["```text", output.strip()[-1500:], "```", ""]
    return lines


class Coordinator:
    def __init__(
        self,
        sessions: SessionStore,
        tickets: TicketBoard,
        feed: Feed,
        chat: Callable[[], ChatModel],
        memory: MemoryProvider | None = None,
        *,
        max_tokens: int = 128,
        max_steps: int = 3,
        memory_limit: int = 3,
        min_score: float = 0.15,
        run_locks: RunLocks | None = None,
        limits: Limits | None = None,
        network: NetworkChoice = "auto",
    ) -> None:
        self.sessions = sessions
        #: the sandbox a step's code runs in
        self.limits = limits or Limits()
        self.network: NetworkChoice = network
        #: one run per session across processes; None: this process only (tests, tools)
        self.run_locks = run_locks
        self.tickets = tickets
        self.feed = feed
        self._chat = chat
        self._memory = memory
        self.max_tokens = max_tokens
        self.max_steps = max_steps
        self.memory_limit = memory_limit
        self.min_score = min_score
        self.memory_state = LayerState("semantic memory", retry_after=30.0)
        #: the process is quitting: a run stopped now is interrupted, not cancelled
        self._quitting = threading.Event()
        self._running: set[str] = set()
        self._lock = threading.Lock()

    # -- public ----------------------------------------------------------------------------
    def start(self, task: str, tests: str = "") -> Session:
        """A new session in phase ``planning``, saved (it runs with :meth:`run`).

        ``tests``: Python tests the user attaches, run against the team's code and never shown
        to the model (the strongest check: nobody on the team wrote them)."""
        task = task.strip()
        if not task:
            raise ValueError("the task is empty")
        session = Session.new(task, model=self._model_name())
        if tests.strip():
            session.data["tests"] = tests
        self.sessions.save(session)
        return session

    def stop_for_shutdown(self) -> None:
        """The process is quitting: runs cancelled from now on stay in their phase (listed as
        interrupted and resumable at the next start), not recorded as cancelled by the user."""
        self._quitting.set()

    def running(self) -> set[str]:
        """The sessions this process is running now."""
        with self._lock:
            return set(self._running)

    def run_states(self, sessions: Iterable[Session]) -> dict[str, RunState]:
        """The :class:`RunState` of each of ``sessions`` that is running or interrupted.

        Sessions missing from the answer are idle: done, or failed/cancelled and not being
        resumed. With run locks, "running elsewhere" and "interrupted" are exact: the lock
        of a process that died is free.
        """
        here = self.running()
        own = os.getpid()
        out: dict[str, RunState] = {}
        for session in sessions:
            sid = session.session_id
            if sid in here:
                out[sid] = RunState("running")
                continue
            if session.phase == "done":
                continue
            holder = self.run_locks.holder(sid) if self.run_locks is not None else None
            if holder is not None:
                if holder.pid == own:  # started between running() and the probe
                    out[sid] = RunState("running")
                else:
                    out[sid] = RunState("running elsewhere", holder.pid)
            elif session.phase in ACTIVE_PHASES:
                out[sid] = RunState("interrupted")
        return out

    def run(
        self,
        session_id: str,
        progress: Progress | None = None,
        on_event: EventCallback | None = None,
    ) -> Session:
        """Run (or resume) a session to its end; returns it in its final phase.

        Raises :class:`CancelledError` when ``progress`` is cancelled (the session is saved as
        ``cancelled``, resumable), and environment errors (model, dimension mismatch) after
        saving the session as ``failed`` — also resumable.

        Only one run of a session at a time: :class:`SessionBusyError` when this process
        runs it already, :class:`SessionRunningError` when another live process does (its
        run lock); both before anything of the session is read or written. Once the lock is
        held the session is re-read from the durable layers (another process may have
        advanced it since this one cached it).
        """
        progress = progress or Progress()
        with self._lock:
            if session_id in self._running:
                raise SessionBusyError(f"session {session_id} is already running in this process")
            self._running.add(session_id)
        try:
            lock, notes = self._claim(session_id)
            try:
                session = self.sessions.reload(session_id)
                if session is None:
                    raise StoreUnavailableError(
                        f"session {session_id} is not in any reachable store"
                    )
                return self._run(session, progress, on_event, notes)
            finally:
                if lock is not None:
                    lock.release()
        finally:
            with self._lock:
                self._running.discard(session_id)

    def _claim(self, session_id: str) -> tuple[RunLock | None, list[str]]:
        """The run lock (raises :class:`SessionRunningError`); when the lock itself cannot be
        made (an unusable data dir) the run goes on with a warning, like any failing layer
        (MA6) — there is then no durable copy another process could resume either."""
        if self.run_locks is None:
            return None, []
        try:
            return self.run_locks.acquire(session_id), []
        except StoreUnavailableError as err:
            log.warning("multi-agent: running %s without its run lock: %s", session_id, err)
            return None, [
                f"Could not take the run lock ({err}); make sure no other Custodia process "
                "runs this session at the same time."
            ]

    # -- the phases ------------------------------------------------------------------------
    def _run(
        self,
        session: Session,
        progress: Progress,
        on_event: EventCallback | None,
        notes: Iterable[str] = (),
    ) -> Session:
        ctx = _Run(self, session, progress, on_event)
        if session.finished:
            return session
        resumed = bool(session.events)
        if resumed:
            ctx.event(SESSION_STARTED, f"Resuming: {session.task}", resumed=True)
        else:
            ctx.event(SESSION_STARTED, session.task)
        for note in notes:
            ctx.event(WARNING, note)
        try:
            self._need_a_model()
            memory = self._open_memory(ctx)
            ctx.memory = memory
            steps = self._plan(ctx)
            self._work(ctx, steps)
            self._review(ctx)
        except CancelledError:
            if self._quitting.is_set():
                ctx.event(WARNING, "Stopped because Custodia was closed; resume to continue.")
                raise
            ctx.finish("cancelled", "Cancelled by the user; resume to continue.")
            raise
        except CustodiaEnvironmentError as err:
            session.data["error"] = str(err)
            ctx.finish("failed", f"Failed: {err}")
            raise
        except Exception as err:
            log.exception("multi-agent session %s crashed", session.session_id)
            session.data["error"] = f"{type(err).__name__}: {err}"
            ctx.finish("failed", f"Failed (bug, see the log): {type(err).__name__}: {err}")
            raise
        status, why = session_status(list(session.data.get("steps") or []))
        session.data["verification"] = {"status": status, "label": LABELS[status], "summary": why}
        session.phase = "done"  # the run is over (MA7's phase); what it is worth: its status
        session.data["result"] = assemble_result(session)
        ctx.save()
        ctx.finish("done", f"Finished — {LABELS[status]}: {why}.", verification=status)
        return session.copy()

    def _need_a_model(self) -> None:
        """The team plans, works and reviews by generating text: in retrieval-only mode its
        "plan" would be the mode's label and its results placeholders stored in memory, so
        the session fails (resumable) with the reason instead."""
        model = self._chat()
        if model.retrieval_only:
            reason = getattr(model, "reason", "") or "retrieval-only mode is selected"
            raise ModelUnavailableError(
                f"the multi-agent team needs a chat model to plan and write, and none is "
                f"available ({reason}); start its server or choose another model in "
                "Settings (or CUSTODIA_CHAT_MODEL), restart Custodia, then resume"
            )

    def _open_memory(self, ctx: _Run) -> SemanticMemory | None:
        if self._memory is None:
            return None
        try:
            memory = self._memory()
            memory.check()  # a model change must be seen, never hidden as "nothing found"
        except DimensionMismatchError:
            raise
        except StoreUnavailableError as err:
            self.memory_state.fail(err)
            ctx.event(WARNING, f"Semantic memory unavailable, going on without it: {err}")
            return None
        self.memory_state.recover()
        return memory

    def _plan(self, ctx: _Run) -> list[dict[str, Any]]:
        data = ctx.session.data
        if "steps" in data:
            return list(data["steps"])
        ctx.phase("planning")
        task = ctx.session.task
        text = ctx.act(EXPERTS["planner"], f"Task: {task}", ticket="")
        plan = plan_steps(text, task, self.max_steps)
        steps = []
        for index, (title, expert) in enumerate(plan, start=1):
            ticket = Ticket.new(ctx.session.session_id, index, title, expert, "planner")
            steps.append(
                {
                    "index": index,
                    "title": title,
                    "expert": expert,
                    "ticket": ticket.ticket_id,
                    "created_at": ticket.created_at,
                }
            )
            ctx.ticket(ticket, f"Step {index} → {expert}: {title}")
        data["plan"] = text
        data["steps"] = steps
        ctx.save()
        ctx.advance()
        return steps

    def _work(self, ctx: _Run, steps: list[dict[str, Any]]) -> None:
        if all(_step_done(step) for step in steps):
            return
        ctx.phase("working")
        task = ctx.session.task
        for step in ctx.session.data["steps"]:
            if _step_done(step):
                continue
            ctx.progress.check()
            ticket = Ticket(
                ticket_id=step["ticket"],
                session_id=ctx.session.session_id,
                step=step["index"],
                title=step["title"],
                expert=step["expert"],
                from_expert="planner",
                status="working",
                created_at=step.get("created_at", 0.0),
            )
            if step.get("result") is None:
                ctx.ticket(ticket, f"{step['expert']} took step {step['index']}")
                prompt = f"Task: {task}\nYour step ({step['index']}): {step['title']}"
                result = ctx.act(EXPERTS[step["expert"]], prompt, ticket=step["ticket"])
                step["result"] = result
                ctx.save()
                ctx.advance()
            self._verify(ctx, step)
            ctx.ticket(
                ticket.handed("reviewer", "review"),
                f"{step['expert']} handed step {step['index']} to the reviewer",
            )

    # -- the check ---------------------------------------------------------------------------
    def _verify(self, ctx: _Run, step: dict[str, Any]) -> None:
        """Check the step's code; a failure is retried once, the failure as feedback. The
        record goes to ``step["verification"]`` (saved after each attempt: resumable)."""
        record = step.get("verification") or {}
        if record.get("status") in _CHECKED:
            return
        attempts: list[dict[str, Any]] = list(record.get("attempts") or [])
        while True:
            ctx.progress.check()
            attempt = self._check_once(ctx, step, len(attempts) + 1)
            attempts.append(attempt.to_dict())
            # stored again with what its check found (the same text: the same point)
            ctx.remember(EXPERTS[step["expert"]], step["result"], step["ticket"], attempt.status)
            step["verification"] = {"status": "checking", "attempts": attempts}
            ctx.save()
            if attempt.status != FAILED or step.get("retried"):
                break
            ctx.event(
                RETRY,
                f"Step {step['index']} failed its check ({attempt.summary}); "
                f"the {step['expert']} tries once more with the failure.",
                expert=step["expert"],
                ticket=step["ticket"],
                step=step["index"],
            )
            prompt = (
                f"Task: {ctx.session.task}\nYour step ({step['index']}): {step['title']}\n"
                f"Your previous answer:\n{step['result']}\n\n"
                f"It failed its check:\n{attempt.feedback()}\n\n"
                "Fix the code. Write the whole corrected code in one ```python block."
            )
            retried = ctx.act(EXPERTS[step["expert"]], prompt, ticket=step["ticket"])
            step.setdefault("drafts", []).append(step["result"])
            step["result"] = retried
            step["retried"] = True
            ctx.save()
        step["verification"] = {
            "status": attempt.status,
            "summary": attempt.summary
            + (" (after one retry)" if len(attempts) > 1 and attempt.status == VERIFIED else ""),
            "tests_from": attempt.tests_from,
            "attempts": attempts,
        }
        ctx.save()

    def _check_once(self, ctx: _Run, step: dict[str, Any], number: int) -> Attempt:
        """One attempt: find the tests (asking the tester when nobody wrote any), run them."""
        answer = str(step.get("result") or "")
        data = ctx.session.data
        given = [
            ("the tests you attached", str(data.get("tests") or "")),
            ("the tests in the task", find_tests(ctx.session.task)),
        ]
        source, _why = python_source(answer)
        code, own_tests = split_tests(source)
        wanted = asks_for_tests(ctx.session.task) or not own_tests.strip()
        if (
            source
            and _parses(code)
            and not any(t.strip() for _, t in given)
            and wanted
            and "tester" not in step
        ):
            self._ask_tester(ctx, step, code)
        tests, why_none = written_tests(str(step.get("tester") or ""))
        given.append(("tests the tester wrote", tests))
        missing = ""
        if "tester" in step and why_none:
            twice = " twice" if step.get("tester_drafts") else ""
            missing = f"the tester was asked for them{twice}: {why_none}"
        if source:
            ctx.event(
                VERIFYING,
                f"Checking step {step['index']}'s code: parsing it, then running its tests in "
                f"a sandbox (no network, {self.limits.wall_seconds:g} s, "
                f"{self.limits.memory_mb} MB)",
                step=step["index"],
            )
        attempt = check(answer, given, number, self.limits, self.network, missing=missing)
        if source or number > 1:
            ctx.event(
                VERIFICATION,
                f"Step {step['index']}: {LABELS[attempt.status]} — {attempt.summary}",
                step=step["index"],
                verification=attempt.to_dict(),
            )
        return attempt

    def _ask_tester(self, ctx: _Run, step: dict[str, Any], code: str) -> None:
        """The tester writes the tests nobody gave; an answer with none that can run (no
        ``test_`` function, tests that do not parse) is asked for once more, with why."""
        prompt = f"Task: {ctx.session.task}\nThe code:\n```python\n{code.strip()}\n```"
        answer = ctx.act(EXPERTS["tester"], prompt, ticket=step["ticket"])
        _tests, why_none = written_tests(answer)
        if why_none:
            ctx.event(
                RETRY,
                f"Step {step['index']}: the tester wrote no tests that can run ({why_none}); "
                "it is asked once more.",
                expert="tester",
                ticket=step["ticket"],
                step=step["index"],
            )
            again = (
                f"{prompt}\n\nYour previous answer had no tests that can run: {why_none}. "
                "Write only pytest functions named test_… that call the code above and assert "
                "its results, in one ```python block. Do not write the code again."
            )
            step.setdefault("tester_drafts", []).append(answer)
            answer = ctx.act(EXPERTS["tester"], again, ticket=step["ticket"])
        step["tester"] = answer
        ctx.save()

    def _review(self, ctx: _Run) -> None:
        data = ctx.session.data
        if "review" in data:
            return
        ctx.phase("reviewing")
        results = "\n".join(
            f"- [{s['expert']}] step {s['index']} ({s['title']}): {s['result']}" + _check_line(s)
            for s in data["steps"]
        )
        prompt = f"Task: {ctx.session.task}\nResults:\n{results}"
        # The final answer gets room to finish its sentences (the steps' budget cut it mid-line).
        data["review"] = ctx.act(
            EXPERTS["reviewer"],
            prompt,
            ticket="",
            own_session=True,
            max_tokens=max(self.max_tokens * REVIEW_BUDGET, 256),
            status=session_status(list(data["steps"]))[0],
        )
        ctx.save()
        ctx.advance()
        for step in data["steps"]:
            ticket = Ticket(
                ticket_id=step["ticket"],
                session_id=ctx.session.session_id,
                step=step["index"],
                title=step["title"],
                expert="reviewer",
                from_expert=step["expert"],
                status="closed",
                created_at=step.get("created_at", 0.0),
            )
            self.tickets.put(ticket)

    def _model_name(self) -> str:
        try:
            return self._chat().name
        except CustodiaEnvironmentError:
            return ""


def _parses(code: str) -> bool:
    """Code worth writing tests for (a syntax error is the finding already)."""
    try:
        ast.parse(code)
    except (SyntaxError, ValueError):
        return False
    return True


def _step_done(step: dict[str, Any]) -> bool:
    """Worked on and checked (a step of a session from before checks is checked on resume)."""
    record = step.get("verification")
    return (
        step.get("result") is not None
        and isinstance(record, dict)
        and record.get("status") in _CHECKED
    )


def _check_line(step: dict[str, Any]) -> str:
    record = step.get("verification") or {}
    if record.get("status") not in _CHECKED:
        return ""
    return f"\n  Check: {LABELS[record['status']]} — {record.get('summary', '')}"


class _Run:
    """One run of one session: events, saves, expert calls."""

    def __init__(
        self,
        coordinator: Coordinator,
        session: Session,
        progress: Progress,
        on_event: EventCallback | None,
    ) -> None:
        self.c = coordinator
        self.session = session
        self.progress = progress
        self.on_event = on_event
        self.memory: SemanticMemory | None = None

    def advance(self) -> None:
        """Progress: planning + one per step + review."""
        data = self.session.data
        steps = data.get("steps") or []
        done = int("steps" in data) + sum(s.get("result") is not None for s in steps)
        done += int("review" in data)
        total = (len(steps) or self.c.max_steps) + 2
        self.progress.total, self.progress.done = total, done - 1
        self.progress.advance(1, f"{done}/{total}")

    def save(self) -> None:
        stored = self.c.sessions.save(self.session)
        self.session.updated_at = stored.updated_at

    def event(self, kind: str, text: str, expert: str = "", **extra: Any) -> dict[str, Any]:
        session = self.session
        event: dict[str, Any] = {
            "session": session.session_id,
            "seq": len(session.events) + 1,
            "ts": time.time(),
            "kind": kind,
            "phase": session.phase,
            "expert": expert,
            "text": text,
        }
        event.update(extra)
        session.events.append(event)
        self.save()
        self.c.feed.emit(session.session_id, event)
        if self.on_event is not None:
            self.on_event(event)
        return event

    def phase(self, phase: str) -> None:
        self.session.phase = phase
        self.event(PHASE, phase)

    def ticket(self, ticket: Ticket, text: str) -> None:
        stored = self.c.tickets.put(ticket)
        self.event(
            TICKET,
            text,
            expert=ticket.expert,
            ticket=ticket.ticket_id,
            status=ticket.status,
            stored=stored,
        )

    def finish(self, phase: str, text: str, **extra: Any) -> None:
        self.session.phase = phase
        self.event(SESSION_FINISHED, text, outcome=phase, **extra)

    def retrieve(self, expert: Expert, query: str, own_session: bool) -> list[MemoryHit]:
        memory = self.memory
        if memory is None:
            return []
        sid = self.session.session_id
        # Its own session's results for the reviewer; past sessions' for everyone else (this
        # session's work reaches them through the prompt). Filters go inside the query.
        scope: dict[str, str | None] = {"session": sid} if own_session else {"exclude_session": sid}
        hits: list[MemoryHit] = []
        try:
            if expert.verified_only:
                where = {**tags_where(**scope), **EXAMPLES}
                vector = memory.embedder.embed(query)
                for name in expert.reads:
                    found = memory.collection(name).query(vector, self.c.memory_limit, where)
                    hits += [MemoryHit(h.id, h.score, dict(h.payload), name) for h in found]
            else:
                for name in expert.reads:
                    hits.extend(memory.search(name, query, limit=self.c.memory_limit, **scope))
        except DimensionMismatchError:
            raise
        except StoreUnavailableError as err:
            self.c.memory_state.fail(err)
            self.event(WARNING, f"Semantic memory search failed: {err}", expert=expert.name)
            return []
        hits = [h for h in hits if h.score >= self.c.min_score]
        hits.sort(key=lambda h: -h.score)
        return hits[: self.c.memory_limit]

    def remember(self, expert: Expert, text: str, ticket: str, status: str = UNVERIFIED) -> None:
        """Store ``text`` with the ``status`` of its check (``unverified`` when nothing checked
        it); only verified work goes to :data:`CODE_PATTERNS` — a failed draft stored as an
        example came back as the next task's code (issue 24)."""
        memory = self.memory
        if memory is None or not text.strip():
            return
        if expert.name == "reviewer":
            text_for = {"session_memory": f"Task: {self.session.task}\nOutcome: {text}"}
        else:
            text_for = {}
        try:
            for name in expert.writes:
                if name == CODE_PATTERNS and status != VERIFIED:
                    continue
                item = MemoryItem(
                    text=text_for.get(name, text),
                    session=self.session.session_id,
                    expert=expert.name,
                    ticket=ticket,
                    extra={"task": self.session.task, "status": status},
                )
                memory.add(name, item)
        except DimensionMismatchError:
            raise
        except StoreUnavailableError as err:
            self.c.memory_state.fail(err)
            self.event(WARNING, f"Could not store the result in memory: {err}", expert=expert.name)

    def act(
        self,
        expert: Expert,
        user: str,
        ticket: str,
        own_session: bool = False,
        max_tokens: int | None = None,
        status: str = UNVERIFIED,
    ) -> str:
        """Retrieve, ask the model, store: one expert's turn. Cancellable. ``status``: what
        the result is stored as (a coder's is stored again once its check is over)."""
        self.progress.check()
        hits = self.retrieve(expert, user, own_session)
        self.event(
            RETRIEVED,
            f"{len(hits)} related item(s) from semantic memory",
            expert=expert.name,
            hits=[{"collection": h.collection, "score": round(h.score, 3)} for h in hits],
        )
        self.event(EXPERT_STARTED, f"{expert.name} is working", expert=expert.name, ticket=ticket)
        prompt = Prompt(
            user=user,
            system=expert.system,
            context=[
                f"[{h.collection} · {h.expert} · {h.payload.get('status') or UNVERIFIED}] "
                f"{h.text[:400]}"
                for h in hits
            ],
            max_tokens=max_tokens or self.c.max_tokens,
        )
        model = self.c._chat()
        pieces = []
        for piece in model.stream(prompt, should_stop=lambda: self.progress.cancelled):
            pieces.append(piece)
        self.progress.check()
        text = "".join(pieces).strip()
        self.remember(expert, text, ticket, status)
        self.event(EXPERT_RESULT, text, expert=expert.name, ticket=ticket)
        return text
