"""Temporal activities of graphrun (installed as graphrun.activities)."""

from graphrun.activities.nodes import route_update, run_node
from graphrun.activities.threads import delete_thread
from graphrun.activities.webhook import send_webhook

__all__ = ["delete_thread", "route_update", "run_node", "send_webhook"]
