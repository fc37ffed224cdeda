"""The window's status bar: what each tab answers with, the default chat model, the stores'
health, the work running — every piece readable or ending in "…" with the whole of it in
its tooltip, at the window's minimum width (760 px) and in Spanish (issue 30).

A plain :class:`QLabel` is cut where the room ends ("Comprobando los almacer",
"(carganc"); an :class:`ElidedLabel` ends in "…" instead. Below
:data:`FULL_WIDTH` the profile, the embedder and the default chat model give way (they are
in the storage map, Help ▸ About and the tab model's tooltip); what changes during the day
stays. Models are named by :func:`backends.models.manage.friendly_name`, as everywhere.
"""

from __future__ import annotations

from collections.abc import Iterable

from PySide6.QtCore import QCoreApplication, QEvent, QObject, QSize, Qt
from PySide6.QtGui import QHelpEvent, QPainter, QPaintEvent, QTextDocument
from PySide6.QtWidgets import QLabel, QStatusBar, QStyleOption, QToolTip, QWidget

from backends import doctor
from backends.config import Config
from backends.models.manage import friendly_name
from desktop.i18n import config_word
from desktop.tabs import short_title_of

#: from this window width on every piece is shown; below it the profile, the embedder and
#: the default chat model give way (at 760 px every label was cut: "Perfil: int")
FULL_WIDTH = 1100
#: what an elided label keeps at least: a few letters and "…"
MIN_CHARS = 6
RETRIEVAL_ONLY = "retrieval-only"


def translate(context: str, text: str) -> str:
    """Qt's ``translate``: these words kept the window's context ("MainWindow", written at
    each call so lupdate finds them) when they moved here from the window."""
    return QCoreApplication.translate(context, text)


class ElidedLabel(QLabel):
    """A one-line label that ends in "…" when its room is short, the whole text then in its
    tooltip (before the tooltip it was given); ``text()`` is always the whole text."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(text, parent)
        self.setTextFormat(Qt.TextFormat.PlainText)

    def plain_text(self) -> str:
        """The text without its markup (a rich-text label's ``<b>`` gone)."""
        if self.textFormat() == Qt.TextFormat.RichText:
            document = QTextDocument()
            document.setHtml(self.text())
            return document.toPlainText()
        return self.text()

    def _needed(self) -> int:
        """The width the whole text needs (bold parts of rich text included)."""
        if self.textFormat() == Qt.TextFormat.RichText:
            document = QTextDocument()
            document.setDefaultFont(self.font())
            document.setDocumentMargin(0)
            document.setHtml(self.text())
            return int(document.idealWidth()) + 1
        return self.fontMetrics().horizontalAdvance(self.text()) + 1

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        margins = self.contentsMargins()
        return QSize(self._needed() + margins.left() + margins.right(), hint.height())

    def minimumSizeHint(self) -> QSize:
        metrics = self.fontMetrics()
        width = metrics.horizontalAdvance(self.plain_text()[:MIN_CHARS] + "…")
        return QSize(min(width, self.sizeHint().width()), super().minimumSizeHint().height())

    def is_elided(self) -> bool:
        """Whether the text does not fit its room (so it is shown ending in "…")."""
        return bool(self.text()) and self._needed() > self.contentsRect().width()

    def shown_text(self) -> str:
        """What the label shows: the whole text, or its start and "…"."""
        if not self.is_elided():
            return self.plain_text()
        return self.fontMetrics().elidedText(
            self.plain_text(), Qt.TextElideMode.ElideRight, self.contentsRect().width()
        )

    def full_tooltip(self) -> str:
        """The tooltip shown: the whole text first when it is cut, then the label's own."""
        own = self.toolTip()
        if not self.is_elided():
            return own
        whole = self.plain_text()
        return whole if not own or own == whole else f"{whole}\n{own}"

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.ToolTip and isinstance(event, QHelpEvent):
            tip = self.full_tooltip()
            if tip:
                QToolTip.showText(event.globalPos(), tip, self)
            else:
                QToolTip.hideText()
                event.ignore()
            return True
        return super().event(event)

    def paintEvent(self, event: QPaintEvent) -> None:
        if not self.is_elided():
            super().paintEvent(event)
            return
        painter = QPainter(self)
        option = QStyleOption()
        option.initFrom(self)
        self.style().drawItemText(
            painter,
            self.contentsRect(),
            int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter),
            option.palette,
            self.isEnabled(),
            self.shown_text(),
            self.foregroundRole(),
        )


def _label(name: str, text: str = "", parent: QWidget | None = None) -> ElidedLabel:
    label = ElidedLabel(text, parent)
    label.setObjectName(name)
    return label


class WindowStatus(QObject):
    """The status bar's labels, filled from the configuration, the start-up checks, the
    model pickers and the worker pool."""

    def __init__(self, bar: QStatusBar, config: Config, assistants: Iterable[str]) -> None:
        super().__init__(bar)
        self.bar = bar
        self.config = config
        self.profile = _label(
            "status_profile",
            translate("MainWindow", "Profile: {0}").format(config_word(config.profile)),
        )
        self.chat = _label(
            "status_chat_model",
            translate("MainWindow", "Chat: {0} (loading…)").format(
                friendly_name(config.chat_model)
            ),
        )
        self.embedder = _label(
            "status_embedder",
            translate("MainWindow", "Embedder: {0} (loading…)").format(config.embedder),
        )
        self.health = _label("status_health", translate("MainWindow", "Checking stores…"))
        self.health.setTextFormat(Qt.TextFormat.RichText)
        self.busy = _label("status_busy")
        self.tab_model = _label("status_tab_model")
        #: assistant -> (what it answers with, why/details)
        self.tab_models: dict[str, tuple[str, str]] = {
            a: (
                translate("MainWindow", "{0} (loading…)").format(
                    friendly_name(config.model_for(a))
                ),
                "",
            )
            for a in assistants
        }
        for label in (self.tab_model, self.profile, self.chat, self.embedder):
            bar.addPermanentWidget(label)
        bar.addWidget(self.health, 1)  # first to get room: it says when something is wrong
        bar.addWidget(self.busy)

    # -- width -----------------------------------------------------------------------------
    def fit(self, width: int) -> None:
        """Below :data:`FULL_WIDTH` only what changes during the day is shown."""
        wide = width >= FULL_WIDTH
        for label in (self.profile, self.embedder, self.chat):
            label.setVisible(wide)

    def labels(self) -> list[ElidedLabel]:
        return [self.health, self.busy, self.tab_model, self.profile, self.chat, self.embedder]

    # -- what the models are -----------------------------------------------------------------
    def loading(self, config: Config) -> None:
        """Every assistant's model, loading (after Settings changed them)."""
        self.config = config
        for assistant in self.tab_models:
            self.tab_models[assistant] = (
                translate("MainWindow", "{0} (loading…)").format(
                    friendly_name(config.model_for(assistant))
                ),
                "",
            )

    def model_loaded(self, assistant: str, shown: str, why: str) -> None:
        self.tab_models[assistant] = (shown, why)

    def show_tab_model(self, current: str) -> None:
        """The current tab's model; every tab's (and the default chat model) in the tooltip."""
        if current in self.tab_models:
            shown, _why = self.tab_models[current]
            self.tab_model.setText(
                translate("MainWindow", "{0}: {1}").format(short_title_of(current), shown)
            )
        lines = [
            f"{short_title_of(assistant)}: {shown}" + (f" — {why}" if why else "")
            for assistant, (shown, why) in self.tab_models.items()
        ]
        lines.append(self.chat.text())
        self.tab_model.setToolTip("\n".join(lines))

    def busy_count(self, count: int) -> None:
        self.busy.setText(
            translate("MainWindow", "{0} task(s) running").format(count) if count else ""
        )

    # -- the start-up checks -------------------------------------------------------------------
    def show_checks(self, checks: list[doctor.Check], config: Config) -> None:
        """What the checks found: each tab's model as loaded, the default chat model, the
        embedder and the stores' health."""
        self.config = config
        by_role = {c.role: c for c in checks}
        for assistant in self.tab_models:
            check = by_role.get(f"chat model ({assistant})", by_role.get("chat model"))
            if check is None:
                continue
            if check.details.get("retrieval_only"):
                self.tab_models[assistant] = (friendly_name(RETRIEVAL_ONLY), check.reason)
            else:
                self.tab_models[assistant] = (
                    friendly_name(config.model_for(assistant)),
                    check.reason,
                )
        chat = by_role.get("chat model")
        if chat is not None:
            self._show_chat(chat, config)
        emb = by_role.get("embedder")
        if emb is not None:
            if emb.ok:
                self.embedder.setText(
                    translate("MainWindow", "Embedder: {0} ({1}-d)").format(
                        emb.kind, emb.details.get("dimension")
                    )
                )
            else:
                self.embedder.setText(translate("MainWindow", "Embedder: unavailable"))
                self.embedder.setToolTip(emb.reason)
        problems = [c for c in checks if c.required and not c.ok]
        if problems:
            names = ", ".join(c.role for c in problems)
            self.health.setText(
                translate(
                    "MainWindow", "<b>Problems:</b> {0} — see Tools ▸ Check stores and models"
                ).format(names)
            )
            self.health.setToolTip("\n".join(c.line() for c in problems))
        else:
            self.health.setText(translate("MainWindow", "All stores and models ready"))
            self.health.setToolTip("")

    def _show_chat(self, chat: doctor.Check, config: Config) -> None:
        text = translate("MainWindow", "Chat: {0}").format(friendly_name(config.chat_model))
        if chat.details.get("retrieval_only"):
            text = translate("MainWindow", "Chat: retrieval-only mode")
            self.chat.setToolTip(chat.reason)
        elif not chat.ok:
            text = translate("MainWindow", "Chat: unavailable")
            self.chat.setToolTip(chat.reason)
        self.chat.setText(text)

    def checks_failed(self, message: str) -> None:
        self.health.setText(
            translate("MainWindow", "<b>Start-up checks failed:</b> {0}").format(message)
        )
