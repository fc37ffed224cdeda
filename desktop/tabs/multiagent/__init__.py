"""The multi-agent tab (MA1-MA11): a task, a team of experts, a live feed.

Top (:mod:`.task_bar`): the task (``task_input``), ``run_task``, ``cancel_task``,
``resume_task``, the phase indicator (``phase``) and the progress bar. Left
(:mod:`.sessions_panel`): the sessions (``sessions``, newest first, ``phase_filter``). Middle
(:mod:`.feed_panel`, :mod:`.result_panel`): the live feed (``feed``), and the result with what
was verified (AL3) — ``verification_badge`` (verified / failed verification / unverified
draft) and ``verification_tests`` (each checked step, its tests passed or failed, a failure's
output folded under it). Right (:mod:`.side_panel`): the tickets with their countdowns
(``tickets``) and the semantic memory search (``memory_search``, results in
``memory_results``; ``reembed_memory`` when the embedder changed). Bottom
(:mod:`.status_panel`): errors (``multiagent_error``), a note about another session
(``multiagent_notice``) and the health of every layer (``layer_health``). A finished session
is listed by its status, never as just "done".

The panels draw a Qt-free model (:mod:`.state`, napari's ``ViewerModel`` / ``QtViewer``
split); the tab (:mod:`.tab`) runs the jobs (:mod:`.jobs`) through the worker pool and hands
their answers to the model. A run is two jobs: one subscribes to the session's feed and
passes each event on as it arrives; once it is subscribed, the other runs the coordinator.
Events carry a sequence number, so whatever reaches the tab twice (the feed, then the final
session) is drawn once and in order.

A session another Custodia process is running (its run lock, see
``backends/multiagent/runlock.py``) is listed as such and cannot be resumed here; if the
other process takes it between the listing and a click, the run is refused untouched and
``run_refused`` says why. Sessions a dead process left behind are listed "(interrupted)";
the backend decides which is which (``MultiAgentService.run_states``, the listing's
:class:`~backends.multiagent.tags.Tags`), for the CLI too.

One run at a time: from the first Enter (or click) until the run ends, another start is
refused. The buttons act on the session shown: ``cancel_task`` is enabled only while the
session shown is the one running. When a run ends while another session is shown, the view
stays where the user put it; the list row shows the final phase and ``multiagent_notice``
says which session ended (its link shows it).
"""

from __future__ import annotations

from PySide6.QtWidgets import QWidget

from backends.multiagent import MultiAgentService
from backends.services import Lazy, ModelChoices
from desktop.tabs.multiagent.tab import MultiAgentTab
from desktop.workers import WorkerPool

__all__ = ["MultiAgentTab", "create"]


def create(
    service: Lazy[object], models: ModelChoices, workers: WorkerPool, parent: QWidget
) -> QWidget:
    return MultiAgentTab(service.narrow(MultiAgentService), models, workers, parent)
