"""Reading the planner's answer (MA8): its steps, and who does each — the plan's own label
("coder: …", "[researcher] …"), else the coder for a step about code and the researcher for
the rest. Small local models answer with code, a heading or one line: each still gives a plan.
"""

from __future__ import annotations

import re

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
#: a list item's mark at the start of a line ("- ", "2.", "(3)", "Step 4:")
BULLET = re.compile(r"^\s*(?:(?:[-*•#]+|\(?\d+[.):]|step\s*\d+\s*[:.)-]?)\s*)+", re.IGNORECASE)


def parse_plan(text: str, task: str, max_steps: int = 3) -> list[str]:
    """The planner's steps: its numbered or bulleted lines (else its plain lines), code
    blocks and "Here is the plan:" lines left out; the task itself when nothing is left.

    Small local models often answer with code instead of a plan: then the task is one step.
    """
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
        step = BULLET.sub("", line).strip()
        role = _ROLE.match(step) or _ROLE_AFTER.search(step)
        if role is not None:
            step = (step[: role.start()] + step[role.end() :]).strip()
        step = BULLET.sub("", step).strip().strip("*").strip()
        if len(step) < 3 or step.endswith(":"):
            continue
        step = step[:240]
        expert = role.group(1).lower() if role is not None else assign(step, 0)
        (listed if BULLET.match(line) else plain).append((step, expert))
    steps = listed or plain
    return steps[:max_steps] or [(task[:240], assign(task, 1))]


def assign(step: str, index: int) -> str:
    """Coder for a step that is about code (:data:`_CODE_WORDS`), researcher for the rest.
    Only for a step the planner did not label."""
    return "coder" if _CODE_WORDS.search(step) else "researcher"
