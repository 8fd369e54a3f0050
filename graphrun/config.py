"""LangGraph's `langgraph.config` names: what a node can read about its run."""

from graphrun.runtime import get_config, get_store, get_stream_writer

__all__ = ["get_config", "get_store", "get_stream_writer"]
