"""Temporal activities of graphrun (installed as graphrun.activities)."""

from graphrun.activities.nodes import route_update, run_node

__all__ = ["route_update", "run_node"]
