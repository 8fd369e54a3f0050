"""Temporal activities of graphrun (installed as graphrun.activities)."""

from graphrun.activities.nodes import run_node

__all__ = ["run_node"]
