"""What every handler shares: the Temporal client, the graphs served, the errors that
become 404 and 409."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from graphrun import errors
from graphrun.client import GraphClient


class NotFound(LookupError):
    """An unknown thread or run."""


class Conflict(RuntimeError):
    """A thread that exists already, or is busy."""


class GraphUnserved(RuntimeError):
    """A graph of langgraph.json that failed to load or build: 424, saying why."""


class Unavailable(RuntimeError):
    """Temporal, or the workers that answer a thread's queries, did not answer in time."""



class Server:
    """What every handler needs: the Temporal client and the graphs served."""

    def __init__(self, gc: GraphClient, graphs: Mapping[str, Any]) -> None:
        self.gc = gc
        self.graphs = dict(graphs)
        self.started = datetime.now(UTC).isoformat()
        self.refresh_on_read = True  # a read of a thread with a TTL starts it again

    def graph_of(self, assistant: str) -> str:
        """The graph an `assistant_id` names: a graph id or its default assistant's id."""
        from graphrun.server.shapes import assistant_id

        for g in self.graphs:
            if assistant in (g, assistant_id(g)):
                return g
        raise errors.GraphNotFoundError(f"Assistant {assistant!r} not found. Graphs served: "
                                        f"{sorted(self.graphs)}.")

    def servable(self, graph_id: str) -> str:
        """`graph_id`, unless it failed to load (GraphUnserved, saying why)."""
        reason = getattr(self.graphs.get(graph_id), "reason", None)
        if reason is not None:
            raise GraphUnserved(reason)
        return graph_id


