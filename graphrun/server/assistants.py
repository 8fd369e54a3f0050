"""Assistants: each graph's default assistant (LangGraph's uuid5 of the graph id)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from pydantic import BaseModel

from graphrun.server.shapes import assistant

router = APIRouter(tags=["assistants"])


class AssistantSearch(BaseModel):
    graph_id: str | None = None
    metadata: dict[str, Any] | None = None
    limit: int = 10
    offset: int = 0


@router.post("/assistants/search")
async def search(body: AssistantSearch, request: Request) -> list[dict[str, Any]]:
    server = request.app.state.server
    found = [assistant(g, server.started) for g in sorted(server.graphs)
             if body.graph_id in (None, g)]
    found = [a for a in found if all(a["metadata"].get(k) == v
                                     for k, v in (body.metadata or {}).items())]
    return found[body.offset:body.offset + body.limit]


@router.get("/assistants/{assistant_id}")
async def get(assistant_id: str, request: Request) -> dict[str, Any]:
    server = request.app.state.server
    return assistant(server.graph_of(assistant_id), server.started)


@router.get("/assistants/{assistant_id}/schemas")
async def schemas(assistant_id: str, request: Request) -> dict[str, Any]:
    server = request.app.state.server
    graph_id = server.graph_of(assistant_id)
    graph = server.graphs[graph_id]
    return {"graph_id": graph_id, "input_schema": graph.get_input_jsonschema(),
            "output_schema": graph.get_output_jsonschema(),
            "state_schema": graph.get_output_jsonschema(), "config_schema": None,
            "context_schema": graph.get_context_jsonschema()}
