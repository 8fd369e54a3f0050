"""Temporal workflows of graphrun (installed as graphrun.workflows)."""

from graphrun.workflows.graph_workflow import GraphWorkflow

__all__ = ["GraphWorkflow"]
