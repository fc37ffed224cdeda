"""The team (MA1): who its experts are — each a system prompt plus the configured chat model —
which semantic-memory collections each reads before acting and writes its result to, and
which may be shown only work that passed its check.
"""

from __future__ import annotations

from dataclasses import dataclass

from backends.multiagent.verify import VERIFIED


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
