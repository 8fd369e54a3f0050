"""The LangGraph Server API on Temporal: LangGraph's SDKs and UIs reach graphrun threads.

`build_app(graph_client, graphs)` returns an ASGI app (FastAPI) that serves the routes
LangGraph's server serves, on top of `graphrun.client`: a thread is a workflow, a run
an invocation of it, the stream graphrun's live stream. The app keeps no state of its
own, so any number of processes can serve the same threads. Needs
`pip install 'graphrun[server]'`; `graphrun serve` runs it with uvicorn.
"""

from typing import Any

__all__ = ["build_app"]


def __getattr__(name: str) -> Any:
    # Imported on use, so a worker without the `server` extra can read the JSON shapes
    # (graphrun.server.shapes) its webhook activity sends.
    if name == "build_app":
        from graphrun.server.app import build_app

        return build_app
    raise AttributeError(name)
