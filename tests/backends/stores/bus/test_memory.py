"""The event bus role's suite on the in-process bus."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from backends.stores.bus import EventBus
from backends.stores.bus.memory import InProcessEventBus
from tests.contract.bus import EventBusContract


class TestInProcessEventBus(EventBusContract):
    @pytest.fixture
    def bus(self) -> Iterator[EventBus]:
        bus = InProcessEventBus()
        yield bus
        bus.close()
