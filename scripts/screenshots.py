"""Screenshots of the real window for the user guide, offscreen (issue 30).

    QT_QPA_PLATFORM=offscreen .venv/bin/python scripts/screenshots.py OUT_DIR \\
        [--theme light|dark] [--size 760x480] [--language en|es]

One fresh data dir (hashing embedder, a scripted chat model answering as the bundled model's
drafts often do), a memory and two past conversations told first; then, through the widgets
as a user would: a memory question, a question about past conversations, a tutor question.
Then a multi-agent task. Saves ``<tab>_<W>x<H>_<theme>.png`` for the memories,
conversations, tutor and multi-agent tabs,
quantised to 256 colours (Pillow) to keep them small.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from PySide6.QtCore import QEventLoop, QSettings, Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication, QLineEdit, QPushButton, QWidget

#: what the scripted model drafts for a question holding the word (a draft naming what no
#: source holds is withheld, as the bundled model's drafts often are)
DRAFTS = {
    "dog": "Your dog is called Rex. Elena, Elenka.",
    "sister": "You told me your sister Elena lives in Lisbon. Call 555-0100 to book.",
    "warfarin": "Warfarin is monitored with the INR every 4 weeks by Dr Smith.",
    "perro": "Tu perro se llama Rex. Elena, Elenka.",
    "hermana": "Me dijiste que tu hermana Elena vive en Lisboa. Llama al 555-0100.",
    "warfarina": "La warfarina se controla con el INR cada 4 semanas, según el Dr. Smith.",
}

#: what is told and asked, in each language
SCENE = {
    "en": {
        "memory": "My dog is called Rex",
        "present": (
            "Birthday present",
            "My sister Elena turns 40 next week, what could I give her?",
            "A photo album of your years together or a cooking class would suit her.",
        ),
        "trip": (
            "Lisbon trip",
            "I want to visit Lisbon in April with my wife.",
            "Lisbon is lovely in April; book the hotel early.",
        ),
        "ask memories": "What's the name of my dog?",
        "ask conversations": "What did you tell me about my sister?",
        "ask tutor": "Which blood test monitors warfarin?",
        "task": "Write a Python function add(a, b) that returns their sum",
    },
    "es": {
        "memory": "Mi perro se llama Rex",
        "present": (
            "Regalo de cumpleaños",
            "Mi hermana Elena cumple 40 la semana que viene, ¿qué le puedo regalar?",
            "Un álbum de fotos de vuestros años juntas o una clase de cocina.",
        ),
        "trip": (
            "Viaje a Lisboa",
            "Quiero ir a Lisboa en abril con mi mujer.",
            "Lisboa es preciosa en abril; reserva el hotel pronto.",
        ),
        "ask memories": "¿Cómo se llama mi perro?",
        "ask conversations": "¿Qué me dijiste de mi hermana?",
        "ask tutor": "¿Qué análisis controla la warfarina?",
        "task": "Escribe una función de Python suma(a, b) que devuelva su suma",
    },
}


def pump(app: QApplication, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 50)
        time.sleep(0.02)


def wait(app: QApplication, done: Callable[[], bool], seconds: float = 120) -> None:
    end = time.monotonic() + seconds
    while not done():
        if time.monotonic() > end:
            raise TimeoutError("the window did not get there in time")
        pump(app, 0.05)


def child(parent: QWidget, kind: type, name: str) -> QWidget:
    found = parent.findChild(kind, name)
    if found is None:
        raise LookupError(name)
    return found


def ask(app: QApplication, tab: QWidget, input_name: str, send_name: str, text: str) -> None:
    """Type ``text`` into the tab's input and press Enter; wait until it can send again."""
    field = child(tab, QLineEdit, input_name)
    send = child(tab, QPushButton, send_name)
    wait(app, send.isEnabled)
    field.setFocus()
    field.setText(text)  # (QTest.keyClicks asserts on "¿")
    QTest.keyClick(field, Qt.Key.Key_Return)
    wait(app, lambda: not send.isEnabled() or not field.text())
    wait(app, send.isEnabled)
    pump(app, 0.5)


def save(widget: QWidget, path: Path) -> None:
    """The window as shown, quantised to 256 colours (a third of the size, text unchanged)."""
    from PIL import Image

    raw = path.with_suffix(".raw.png")
    widget.grab().save(str(raw))
    image = Image.open(raw).convert("RGB")
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(path, optimize=True)
    raw.unlink()
    print(path, path.stat().st_size, flush=True)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--theme", default="light")
    parser.add_argument("--size", default="760x480")
    parser.add_argument("--language", default="en")
    args = parser.parse_args(argv)
    width, height = (int(n) for n in args.size.split("x"))
    args.out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([sys.argv[0]])
    assert isinstance(app, QApplication)

    from backends.config import Config
    from backends.conversations import ConversationAgent
    from backends.conversations.files import Conversation, StoredMessage
    from backends.conversations.naming import now_iso
    from backends.memories import MemoryAssistant
    from backends.models.chat import Prompt, ScriptedChat, ShouldStop
    from backends.services import Services
    from desktop import i18n
    from desktop.main_window import MainWindow

    home = Path(tempfile.mkdtemp(prefix="custodia-shots-")) / "home"
    home.mkdir(mode=0o700)
    config = Config(home=home, embedder="hashing", chat_model="smollm2", language=args.language)
    i18n.install(args.language)
    settings = QSettings(str(home / "window.ini"), QSettings.Format.IniFormat)
    settings.setValue("view/theme", args.theme)
    settings.setValue("welcome/shown", True)

    class Drafts(ScriptedChat):
        """Answers by the question's subject (:data:`DRAFTS`), whichever tab asks first."""

        def stream(self, prompt: Prompt, should_stop: ShouldStop = lambda: False) -> Iterator[str]:
            asked = prompt.user.lower()
            found = [t for k, t in DRAFTS.items() if k in asked]
            text = found[-1] if found else "Noted."  # "warfarina" after "warfarin"
            yield from ScriptedChat(replies=[text]).stream(prompt, should_stop)

    services = Services(config.validated(), chat=Drafts())
    scene = SCENE[args.language]
    services.get("memories", MemoryAssistant).remember(str(scene["memory"]))
    agent = services.get("conversations", ConversationAgent)
    roles = ("user", "assistant")
    for cid, (name, *texts) in (("present", scene["present"]), ("trip", scene["trip"])):
        history = [StoredMessage(roles[i % 2], t, now_iso()) for i, t in enumerate(texts)]
        agent.add(Conversation(cid, name, now_iso(), "llama.cpp", "SmolLM2", history))
    agent.sync_vectors()

    window = MainWindow(services, settings=settings)
    window.resize(width, height)
    ready: list[object] = []
    window.checks_ready.connect(ready.append)
    window.show()
    wait(app, lambda: bool(ready))
    size = f"{width}x{height}"

    def show(name: str) -> QWidget:
        tab = child(window, QWidget, name)
        window.tabs.setCurrentWidget(tab)
        pump(app, 0.5)
        return tab

    memories = show("memories")
    ask(app, memories, "chat_input", "send", str(scene["ask memories"]))
    save(window, args.out / f"memories_{size}_{args.theme}.png")

    conversations = show("conversations")
    wait(app, lambda: bool(getattr(conversations, "ready", True)))
    ask(app, conversations, "chat_input", "send", str(scene["ask conversations"]))
    save(window, args.out / f"conversations_{size}_{args.theme}.png")

    tutor = show("tutor")
    ask(app, tutor, "question", "ask", str(scene["ask tutor"]))
    save(window, args.out / f"tutor_{size}_{args.theme}.png")

    team = show("multiagent")
    field = child(team, QLineEdit, "task_input")
    run = child(team, QPushButton, "run_task")
    assert isinstance(field, QLineEdit) and isinstance(run, QPushButton)
    field.setText(str(scene["task"]))
    QTest.mouseClick(run, Qt.MouseButton.LeftButton)
    pump(app, 1.0)
    wait(app, run.isEnabled)
    pump(app, 1.0)
    save(window, args.out / f"multiagent_{size}_{args.theme}.png")

    window.close_now()
    services.close()
    i18n.uninstall()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
