"""Step routing follows the plan (issue 20): the planner's own label decides who does a step,
and a step that is not about code never goes to the coder; the result is assembled from the
steps and a review is never shown cut mid-sentence."""

from __future__ import annotations

from typing import Any

from backends.models.chat import Prompt, ScriptedChat
from backends.multiagent.plan import assign, plan_steps
from backends.multiagent.result import assemble_result, complete_text
from backends.multiagent.team import EXPERTS
from tests.backends.multiagent.conftest import MakeService

LABELLED = (
    "1. researcher: Review the test results of the clinical trial\n"
    "2. coder: Write a Python script that plots them\n"
    "3. [researcher] Summarise what the plot shows"
)


def test_the_planners_label_decides_who_does_a_step() -> None:
    assert plan_steps(LABELLED, "task") == [
        ("Review the test results of the clinical trial", "researcher"),
        ("Write a Python script that plots them", "coder"),
        ("Summarise what the plot shows", "researcher"),
    ]
    assert plan_steps("- Gather the facts (researcher)\n- **coder:** fix the parser", "t") == [
        ("Gather the facts", "researcher"),
        ("fix the parser", "coder"),
    ]


def test_steps_that_are_not_about_code_never_go_to_the_coder() -> None:
    for step in (
        "Compare the classes of antibiotics",
        "Fix a date for the team meeting",
        "Find out which blood test confirms the diagnosis",
        "Query the literature for recent reviews",
        "List the methods of contraception and their trade-offs",
        "Plan the exercise program for the week",
    ):
        assert assign(step, 1) == "researcher", step
    for step in ("Write a Python function to parse CSV", "Implement the parser", "Debug it"):
        assert assign(step, 1) == "coder", step
    assert "coder:" in EXPERTS["planner"].system  # the planner is asked to label each step


def test_a_run_routes_each_step_as_planned(make_service: MakeService) -> None:
    chat = ScriptedChat(
        replies=[
            LABELLED,
            "The trial met its endpoint.",
            "import matplotlib",
            "A rising curve.",
            "All steps are right. Final answer: the trial worked.",
        ]
    )
    session = make_service(chat=chat).ask("Analyse the trial results")
    assert session.phase == "done"
    assert [s["expert"] for s in session.data["steps"]] == ["researcher", "coder", "researcher"]
    coder_prompts = [p.user for p in chat.calls if p.system == EXPERTS["coder"].system]
    assert len(coder_prompts) == 1 and "plots them" in coder_prompts[0]
    result = session.data["result"]
    assert result.startswith("# Analyse the trial results")
    assert "## Answer" in result and "Final answer: the trial worked." in result
    assert "### 2. Write a Python script that plots them — coder" in result
    assert "import matplotlib" in result
    # nothing in it was run ("import matplotlib" is one line of prose-like code): a draft
    assert session.events[-1]["text"].startswith("Finished — unverified draft")
    assert session.data["verification"]["status"] == "unverified"


def test_the_review_gets_room_to_finish_and_is_never_shown_cut_mid_sentence(
    make_service: MakeService,
) -> None:
    budgets: list[int] = []

    class Recording(ScriptedChat):
        def stream(self, prompt: Prompt, should_stop: Any = lambda: False) -> Any:
            budgets.append(prompt.max_tokens)
            yield from super().stream(prompt, should_stop)

    cut = "The steps are right. The parser handles quoting but the"
    chat = Recording(replies=["1. Research CSV dialects", "Dialects differ.", cut])
    session = make_service(chat=chat).ask("Parse CSV files")
    assert budgets[-1] >= 3 * budgets[0]  # the reviewer's budget
    result = assemble_result(session)
    assert "The steps are right." in result and "but the" not in result
    assert "length limit" in result
    assert complete_text("Fine.") == ("Fine.", False)
    assert complete_text("Options:\n1. keep it\n2. drop it") == (
        "Options:\n1. keep it\n2. drop it",
        False,
    )
