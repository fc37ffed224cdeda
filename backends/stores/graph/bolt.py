"""The graph on a Bolt server — Neo4j 5 (the target) or FalkorDB's Bolt endpoint — through the
official ``neo4j`` driver (imported on first use): managed ``execute_query`` calls, READ routing
for reads, timeouts on every call, one retry (every write is idempotent). See the role's
docstring (:mod:`backends.stores.graph`) for the parameter-splicing workaround."""

from __future__ import annotations

import logging
import threading
from typing import Any

from backends.stores.graph import (
    CYPHER,
    DEFAULT_NAMESPACE,
    OPERATIONS,
    AllowListedGraph,
    GraphUnavailableError,
    Operation,
)

log = logging.getLogger(__name__)

# -- Bolt (Neo4j 5, FalkorDB) --------------------------------------------------------------------


def _escape(value: Any) -> Any:
    """For a server that splices parameters into the query text: ``\\`` and ``'`` escaped."""
    if isinstance(value, str):
        return value.replace("\\", "\\\\").replace("'", "\\'")
    if isinstance(value, list):
        return [_escape(v) for v in value]
    if isinstance(value, dict):
        return {k: _escape(v) for k, v in value.items()}
    return value


PROBE = "\\\\"  # two backslashes: a server that splices parameters returns one


class BoltGraph(AllowListedGraph):
    """Neo4j 5 (the target) or any Bolt server (FalkorDB in tests) via the ``neo4j`` driver."""

    kind = "bolt"
    QUERIES = CYPHER

    def __init__(
        self,
        uri: str,
        *,
        user: str = "",
        password: str = "",
        namespace: str = DEFAULT_NAMESPACE,
        timeout: float = 5.0,
        driver: Any = None,
    ) -> None:
        super().__init__(namespace)
        self.uri = uri
        self.timeout = float(timeout)
        self._owns_driver = driver is None
        self._driver = driver
        self._user = user
        self._password = password
        self._lock = threading.Lock()
        #: None until probed; True when the server splices parameters into the text
        self.splices_parameters: bool | None = None

    def _get_driver(self) -> Any:
        with self._lock:
            if self._driver is None:
                try:
                    import neo4j

                    auth = (
                        neo4j.basic_auth(self._user, self._password)
                        if self._user and self._password
                        else None
                    )
                    self._driver = neo4j.GraphDatabase.driver(
                        self.uri,
                        auth=auth,
                        connection_timeout=self.timeout,
                        connection_acquisition_timeout=self.timeout,
                        max_transaction_retry_time=0,
                    )
                except Exception as err:  # bad URI, missing driver
                    raise GraphUnavailableError(f"graph server {self.uri}: {err}") from err
            return self._driver

    def _send(
        self, operation: Operation, text: str, parameters: dict[str, Any]
    ) -> list[dict[str, Any]]:
        import neo4j
        from neo4j.exceptions import DriverError, Neo4jError, ServiceUnavailable, SessionExpired

        driver = self._get_driver()
        routing = (
            neo4j.RoutingControl.READ if operation.access == "read" else neo4j.RoutingControl.WRITE
        )
        query = neo4j.Query(text, timeout=self.timeout)
        last: Exception | None = None
        for attempt in (1, 2):  # one retry: every operation here is idempotent
            try:
                result = driver.execute_query(query, parameters_=parameters, routing_=routing)
                return [dict(record) for record in result.records]
            except (ServiceUnavailable, SessionExpired) as err:
                last = err
                log.info(
                    "graph %s: %s failed (attempt %d): %s", self.uri, operation.name, attempt, err
                )
            except Neo4jError as err:
                raise GraphUnavailableError(
                    f"graph server {self.uri}: {operation.name} failed: "
                    f"{err.code or ''} {err.message or ''}".strip()
                ) from err
            except (DriverError, OSError) as err:
                last = err
        raise GraphUnavailableError(f"graph server {self.uri} is not reachable: {last}") from last

    def _run(
        self, operation: Operation, text: str, parameters: dict[str, Any]
    ) -> list[dict[str, Any]]:
        if operation.name != "probe" and self.splices_parameters is None:
            self._detect_splicing()
        if self.splices_parameters:
            parameters = _escape(parameters)
        return self._send(operation, text, parameters)

    def _detect_splicing(self) -> None:
        rows = self._send(OPERATIONS["probe"], CYPHER["probe"], {"probe": PROBE})
        echoed = rows[0]["probe"] if rows else PROBE
        self.splices_parameters = echoed != PROBE
        if self.splices_parameters:
            log.info("graph %s splices parameters into query text: escaping them", self.uri)

    def close(self) -> None:
        with self._lock:
            if self._owns_driver and self._driver is not None:
                try:
                    self._driver.close()
                except Exception:
                    log.debug("closing the neo4j driver failed", exc_info=True)
            self._driver = None
