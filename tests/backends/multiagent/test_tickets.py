"""Tickets (MA8): TTL only, countdowns, and a board that never raises."""

from __future__ import annotations

import socket

from backends.multiagent.events import Feed
from backends.multiagent.tickets import Ticket, TicketBoard
from backends.stores.bus.redis import RedisEventBus
from backends.stores.engines.redis import redis_client
from backends.stores.ttl.memory import MemoryTTLStore
from backends.stores.ttl.redis import RedisTTLStore


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def dead_redis_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"redis://127.0.0.1:{sock.getsockname()[1]}/0"


def test_tickets_expire_and_show_their_time_left() -> None:
    clock = Clock()
    board = TicketBoard(MemoryTTLStore(clock), ttl=60)
    ticket = Ticket.new("s1", 1, "Write the parser", "coder", "planner")
    assert board.put(ticket)
    board.put(Ticket.new("s2", 1, "Other session", "researcher", "planner"))
    (live,) = board.list("s1")
    assert live.ticket == ticket
    assert 59 < live.remaining() <= 60
    clock.now += 30
    assert 29 <= board.list("s1")[0].remaining() <= 30.5
    board.put(ticket.handed("reviewer", "review"))  # a hand-over renews the TTL
    (handed,) = board.list("s1")
    assert (handed.ticket.expert, handed.ticket.from_expert) == ("reviewer", "coder")
    assert handed.remaining() > 59
    clock.now += 61
    assert board.list("s1") == []
    assert len(board.list()) == 0


def test_a_dead_store_degrades_the_board_without_raising() -> None:
    store = RedisTTLStore.from_url(dead_redis_url(), timeout=1.0)
    board = TicketBoard(store, retry_after=0)
    assert board.put(Ticket.new("s", 1, "t", "coder", "planner")) is False
    assert board.list("s") == []
    assert board.health().startswith("degraded")
    store.close()


def test_a_dead_bus_degrades_the_feed_without_raising() -> None:
    client = redis_client(dead_redis_url(), 1.0)
    feed = Feed(RedisEventBus(client, timeout=1.0))
    assert feed.emit("s", {"seq": 1}) is False
    assert feed.health().startswith("degraded")
    client.close()
