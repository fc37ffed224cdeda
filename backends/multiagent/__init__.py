"""Multi-agent assistant (SPEC section 1, MA1–MA11): a coordinator runs expert agents through
phases; sessions in three layers; tickets with a TTL; a live feed; Qdrant semantic memory.

The desktop and the CLI use :func:`get_service` and :class:`MultiAgentService` only.
"""

from backends.multiagent.service import MultiAgentService, get_service

__all__ = ["MultiAgentService", "get_service"]
