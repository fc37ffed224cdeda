"""The multi-agent tab's result: the answer assembled from the steps, Copy and Export, and
what was verified (AL3) — the badge (verified / failed verification / unverified draft) and
the tests that ran, step by step, a failure's output folded under its test."""

from __future__ import annotations

import html
import re
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QBrush, QColor, QGuiApplication
from PySide6.QtWidgets import (
    QFileDialog,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QTextBrowser,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from backends import i18n
from backends.multiagent import (
    Session,
    limit_text,
    network_name,
    session_summary,
    status_of,
    summary_text,
)
from desktop.markdown import fences_on_own_lines, set_markdown
from desktop.tabs.multiagent.state import MultiAgentState
from desktop.tabs.multiagent.words import (
    expert_name,
    milliseconds,
    phase_name,
    status_color,
    status_name,
    translate,
)

_FENCE_LINE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
#: the outcomes a verification step may record (others are not shown)
_CHECKED = ("verified", "failed", "unverified")


class ResultPanel(QWidget):
    """The result pane, its badge and its tests."""

    #: the user chose a file to export the result to
    export_requested = Signal(str)

    def __init__(
        self, state: MultiAgentState, colors: dict[str, str], parent: QWidget | None = None
    ) -> None:
        super().__init__(parent)
        self.state = state
        self.colors = colors
        self.export_dialog: QFileDialog | None = None
        self._build()
        self._connect_signals()

    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.result_title = QLabel(translate("MultiAgentTab", "<b>Result</b>"))
        self.result_title.setObjectName("multiagent_result_title")
        row.addWidget(self.result_title, 1)
        self.copy_result = QToolButton()
        self.copy_result.setObjectName("copy_result")
        self.copy_result.setText(translate("MultiAgentTab", "Copy"))
        self.copy_result.setToolTip(translate("MultiAgentTab", "Copy the result as Markdown"))
        self.copy_result.setEnabled(False)
        row.addWidget(self.copy_result)
        self.export_result = QToolButton()
        self.export_result.setObjectName("export_result")
        self.export_result.setText(translate("MultiAgentTab", "Export…"))
        self.export_result.setToolTip(
            translate("MultiAgentTab", "Save the result as a Markdown file")
        )
        self.export_result.setEnabled(False)
        row.addWidget(self.export_result)
        layout.addLayout(row)
        self.verification_badge = QLabel()
        self.verification_badge.setObjectName("verification_badge")
        self.verification_badge.setWordWrap(True)
        self.verification_badge.setTextFormat(Qt.TextFormat.RichText)
        self.verification_badge.setVisible(False)
        layout.addWidget(self.verification_badge)
        self.verification_tests = QTreeWidget()
        self.verification_tests.setObjectName("verification_tests")
        self.verification_tests.setHeaderLabels(
            [translate("MultiAgentTab", "What ran"), translate("MultiAgentTab", "Outcome"), ""]
        )
        self.verification_tests.setMaximumHeight(170)
        self.verification_tests.setVisible(False)
        header = self.verification_tests.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.ResizeToContents)
        layout.addWidget(self.verification_tests)
        self.result_view = QTextBrowser()
        self.result_view.setObjectName("multiagent_result")
        self.result_view.setOpenExternalLinks(False)
        self.result_view.setPlaceholderText(
            translate(
                "MultiAgentTab",
                "The final answer, assembled from the steps, appears here when a run ends.",
            )
        )
        layout.addWidget(self.result_view, 1)

    def _connect_signals(self) -> None:
        self.copy_result.clicked.connect(self._on_copy_clicked)
        self.export_result.clicked.connect(self._on_export_clicked)
        self.state.session_shown.connect(self._on_session_shown)

    # -- the result -----------------------------------------------------------------------
    def _on_session_shown(self, session: Session) -> None:
        """The session's result (its stored one, or assembled from what is done so far)."""
        text = self.state.result_markdown
        if not text:
            self.result_view.clear()
            self.result_title.setText(translate("MultiAgentTab", "<b>Result</b>"))
        else:
            # one heading level down on screen: a pane, not a page (the export keeps them)
            set_markdown(self.result_view.document(), headings_down(text))
            if session.phase == "done":
                self.result_title.setText(translate("MultiAgentTab", "<b>Result</b>"))
            else:
                self.result_title.setText(
                    translate("MultiAgentTab", "<b>Result so far</b> ({0})").format(
                        phase_name(session.phase)
                    )
                )
        self.copy_result.setEnabled(bool(text))
        self.export_result.setEnabled(bool(text))
        self._show_verification(session)

    def _on_copy_clicked(self) -> None:
        if self.state.result_markdown:
            QGuiApplication.clipboard().setText(self.state.result_markdown)
            self.result_title.setText(
                translate("MultiAgentTab", "<b>Result</b> — copied to the clipboard")
            )

    def _on_export_clicked(self) -> None:
        if not self.state.result_markdown:
            return
        dialog = QFileDialog(self, translate("MultiAgentTab", "Export the result as Markdown"))
        dialog.setObjectName("export_result_dialog")
        dialog.setOption(QFileDialog.Option.DontUseNativeDialog, True)
        dialog.setAcceptMode(QFileDialog.AcceptMode.AcceptSave)
        dialog.setNameFilters(
            [
                translate("MultiAgentTab", "Markdown (*.md)"),
                translate("MultiAgentTab", "All files (*)"),
            ]
        )
        dialog.setDefaultSuffix("md")
        current = self.state.current
        task = current.task if current is not None else "result"
        stem = "".join(ch if ch.isalnum() else "-" for ch in task.lower())[:40].strip("-")
        dialog.selectFile(f"{stem or 'result'}.md")
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.fileSelected.connect(self.export_requested)
        self.export_dialog = dialog
        dialog.open()

    def show_saved(self, path: str) -> None:
        self.result_title.setText(
            translate("MultiAgentTab", "<b>Result</b> — saved to {0}").format(path)
        )

    # -- what was verified ----------------------------------------------------------------
    def _show_verification(self, session: Session) -> None:
        """The badge (what the result is worth) and the tests that ran, step by step."""
        tree = self.verification_tests
        tree.clear()
        if session.phase != "done":
            self.verification_badge.setVisible(False)
            self.verification_badge.setProperty("status", "")
            tree.setVisible(False)
            return
        self._show_badge(session)
        for step in session.data.get("steps") or []:
            check = step.get("verification")
            if not isinstance(check, dict) or check.get("status") not in _CHECKED:
                continue
            attempts = list(check.get("attempts") or [])
            if step.get("expert") != "coder" and not any(a.get("code_lines") for a in attempts):
                continue  # prose: nothing was there to check
            tree.addTopLevelItem(self._step_item(step, check, attempts))
        tree.setVisible(tree.topLevelItemCount() > 0)

    def _show_badge(self, session: Session) -> None:
        if isinstance(session.data.get("verification"), dict):
            summary = session_summary(session.data)
        else:  # finished before results were checked
            summary = translate(
                "MultiAgentTab", "this session finished before results were checked"
            )
        status = status_of(session.data)
        icon = {"verified": "✓", "failed": "✗"}.get(status, "○")
        text = (
            f"<b style='color:{status_color(self.colors, status)}'>{icon} "
            f"{html.escape(status_name(status))}</b> — "
            f"{html.escape(summary)}."
        )
        if status == "unverified":
            text += " " + translate(
                "MultiAgentTab", "Nothing here was run: read it as the model's draft."
            )
        self.verification_badge.setText(text)
        self.verification_badge.setProperty("status", status)
        self.verification_badge.setVisible(True)

    def _step_item(
        self, step: dict[str, Any], check: dict[str, Any], attempts: list[dict[str, Any]]
    ) -> QTreeWidgetItem:
        """A checked step, each attempt under it (when it took more than one)."""
        item = QTreeWidgetItem(
            [
                translate("MultiAgentTab", "Step {0} ({1}): {2}").format(
                    step.get("index"),
                    expert_name(str(step.get("expert") or "")),
                    summary_text(str(check.get("summary", ""))),
                ),
                status_name(str(check["status"])),
                "",
            ]
        )
        item.setForeground(1, QBrush(QColor(status_color(self.colors, str(check["status"])))))
        for number, attempt in enumerate(attempts, start=1):
            parent = item
            if len(attempts) > 1:
                parent = QTreeWidgetItem(
                    [
                        translate("MultiAgentTab", "Attempt {0}: {1}").format(
                            attempt.get("attempt", number),
                            summary_text(str(attempt.get("summary", ""))),
                        ),
                        status_name(str(attempt.get("status"))),
                        f"{i18n.number(float(attempt.get('seconds') or 0), 2)} s",
                    ]
                )
                item.addChild(parent)
                parent.setExpanded(number == len(attempts))
            self._add_tests(parent, attempt)
        item.setExpanded(True)
        return item

    def _add_tests(self, parent: QTreeWidgetItem, attempt: dict[str, Any]) -> None:
        """One attempt's tests under ``parent``; where they came from and the sandbox in the
        tooltip; a failure's output as a folded child."""
        limits = attempt.get("limits") or {}
        where = translate(
            "MultiAgentTab", "Tests: {0}. Sandbox: no network ({1}), {2} s, {3} MB."
        ).format(
            summary_text(str(attempt.get("tests_from") or ""))
            or translate("MultiAgentTab", "none"),
            network_name(str(attempt.get("network") or "-")),
            limit_text(limits.get("wall_seconds", "-")),
            limit_text(limits.get("memory_mb", "-")),
        )
        parent.setToolTip(0, where)
        outcomes = {
            "passed": ("✓", translate("MultiAgentTab", "passed"), "ok"),
            "failed": ("✗", translate("MultiAgentTab", "failed"), "error"),
            "error": ("⚠", translate("MultiAgentTab", "could not run"), "warning"),
            "skipped": ("–", translate("MultiAgentTab", "skipped"), "faint"),
        }
        for test in attempt.get("tests") or []:
            mark, word, color = outcomes.get(str(test.get("outcome")), ("?", "?", "faint"))
            row = QTreeWidgetItem(
                [
                    f"{mark} {test.get('name')}",
                    word,
                    milliseconds(float(test.get("seconds") or 0)),
                ]
            )
            row.setForeground(1, QBrush(QColor(self.colors[color])))
            row.setToolTip(0, where)
            parent.addChild(row)
            output = str(test.get("output") or "").strip()
            if output.startswith("stopped: "):  # the sandbox's own words, stored in English
                output = summary_text(output)
            if output:
                detail = QTreeWidgetItem([output])
                detail.setToolTip(0, output)
                font = detail.font(0)
                font.setFamily("monospace")
                detail.setFont(0, font)
                row.addChild(detail)
                detail.setFirstColumnSpanned(True)
        if not attempt.get("tests") and attempt.get("output"):
            detail = QTreeWidgetItem([str(attempt["output"]).strip()])
            parent.addChild(detail)
            detail.setFirstColumnSpanned(True)


def headings_down(text: str) -> str:
    """``text``'s Markdown headings one level down (a pane, not a page); lines inside code
    blocks are left as written — a Python comment is not a heading."""
    out: list[str] = []
    fence = ""
    for line in fences_on_own_lines(text).split("\n"):
        opened = _FENCE_LINE.match(line)
        if fence:
            if opened and line.strip().startswith(fence) and not line.strip()[len(fence) :].strip():
                fence = ""
        elif opened:
            fence = opened.group(1)
        elif re.match(r"#{1,5} ", line):
            line = "#" + line
        out.append(line)
    return "\n".join(out)
