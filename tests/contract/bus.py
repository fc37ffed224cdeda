"""Contract of the event bus role (MA9): the abstract suite only.

Each implementation runs it from a small fixtures class in ``tests/backends/stores/bus/``.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from backends.stores.bus import Event, EventBus, Subscription
from tests.contract import describing


def drain(sub: Subscription, count: int, timeout: float = 5.0) -> list[Event]:
    out: list[Event] = []
    deadline = time.monotonic() + timeout
    while len(out) < count and time.monotonic() < deadline:
        event = sub.get(timeout=0.05)
        if event is not None:
            out.append(event)
    return out


class EventBusContract:
    @pytest.fixture
    def bus(self) -> Iterator[EventBus]:
        raise NotImplementedError

    @pytest.fixture
    def channel(self) -> str:
        return f"contract:feed:{uuid.uuid4().hex}"

    def test_is_an_event_bus(self, bus: EventBus) -> None:
        assert isinstance(bus, EventBus)

    def test_events_arrive_in_order_and_intact(self, bus: EventBus, channel: str) -> None:
        sub = bus.subscribe(channel)
        try:
            sent = [{"seq": i, "text": f"step {i} ✓", "nested": {"a": [i]}} for i in range(200)]
            for event in sent:
                bus.publish(channel, event)
            assert drain(sub, len(sent)) == sent
        finally:
            sub.close()

    def test_publish_without_subscribers_is_fine(self, bus: EventBus, channel: str) -> None:
        assert bus.publish(channel, {"seq": 1}) == 0

    def test_every_subscriber_gets_everything(self, bus: EventBus, channel: str) -> None:
        a, b = bus.subscribe(channel), bus.subscribe(channel)
        try:
            assert bus.publish(channel, {"seq": 1}) == 2
            bus.publish(channel, {"seq": 2})
            assert drain(a, 2) == drain(b, 2) == [{"seq": 1}, {"seq": 2}]
        finally:
            a.close()
            b.close()

    def test_channels_are_separate(self, bus: EventBus, channel: str) -> None:
        sub = bus.subscribe(channel)
        try:
            bus.publish(channel + ":other", {"seq": "other"})
            bus.publish(channel, {"seq": "mine"})
            assert drain(sub, 1) == [{"seq": "mine"}]
            assert sub.get(timeout=0.1) is None
        finally:
            sub.close()

    def test_only_events_after_subscribing_arrive(self, bus: EventBus, channel: str) -> None:
        bus.publish(channel, {"seq": "before"})
        sub = bus.subscribe(channel)
        try:
            bus.publish(channel, {"seq": "after"})
            assert drain(sub, 1) == [{"seq": "after"}]
        finally:
            sub.close()

    def test_get_times_out_with_none_and_close_is_idempotent(
        self, bus: EventBus, channel: str
    ) -> None:
        sub = bus.subscribe(channel)
        assert sub.get(timeout=0.05) is None
        sub.close()
        sub.close()
        bus.publish(channel, {"seq": 1})
        assert sub.get(timeout=0.05) is None

    def test_events_from_another_thread_keep_their_order(self, bus: EventBus, channel: str) -> None:
        sub = bus.subscribe(channel)

        def publisher() -> None:
            for i in range(100):
                bus.publish(channel, {"seq": i})

        thread = threading.Thread(target=publisher)
        thread.start()
        try:
            got = drain(sub, 100)
        finally:
            thread.join()
            sub.close()
        assert [e["seq"] for e in got] == list(range(100))

    def test_events_must_be_json(self, bus: EventBus, channel: str) -> None:
        with pytest.raises(ValueError):
            bus.publish(channel, {"not json": object()})

    # -- self-description (the storage map's row, the doctor's probe) -----------------------
    def test_describes_and_measures_itself(self, bus: EventBus, tmp_path: Path) -> None:
        cfg = describing.config(tmp_path)
        measured = describing.measure(bus, cfg)
        assert measured.items == 0  # a bus keeps no event
        describing.check_probe(bus, cfg)
