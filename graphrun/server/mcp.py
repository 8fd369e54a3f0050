"""MCP at `/mcp`, as LangGraph's server serves it: the deployment's assistants as tools,
over MCP's Streamable HTTP transport, stateless, each answer one JSON body.

- `initialize` echoes a protocol version it knows (else answers its latest), with the
  `tools` capability; `ping`; `tools/list`: one tool per assistant the caller may see
  (pages of 100, `nextCursor` an offset), named after the assistant's name made a valid
  tool name (a second assistant of the same tool name is left out), titled with the
  name, described by its description (or "Tool based on the <name> assistant"), its
  `inputSchema` the graph's input schema (a list of LangChain messages simplified to a
  string, the message the user sends); an assistant whose schema fails is left out.
- `tools/call` runs the assistant as a stateless `POST /runs/wait` would (its
  `arguments` the input, a `context` param the run's context) and answers the output's
  `repr` as text: an interrupted run's output carries `__interrupt__` (the run's
  thread is deleted with the run, so the question cannot be answered through MCP); a
  failed node answers `isError` with the error's type. Other methods are JSON-RPC's
  -32601; notifications and responses are accepted (202); GET is 405 (no server
  stream) and DELETE 404 (no sessions).

The calls go through the routes' own functions with the caller's request, so the app's
authentication (API keys or custom auth, in its middleware) and the authorization
handlers apply as on those routes, and their refusals answer with the routes' status.

Not the `mcp` SDK's server: its StreamableHTTPSessionManager needs its `run()` task
group started in the ASGI lifespan, which `graphrun dev` and embedders may run without,
and its answers (sessions, SSE replies, validation errors) are not LangGraph's. The
protocol subset LangGraph serves is a small JSON-RPC handler.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import re
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from graphrun.server import assistants, runs
from graphrun.server.context import NotFound

_log = logging.getLogger(__name__)

router = APIRouter(tags=["mcp"])

PAGE = 100  # tools per tools/list page
MOST = 1000  # assistants a tools/call looks through for its tool's name
INVALID_PARAMS, METHOD_NOT_FOUND = -32602, -32601
VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")  # MCP revisions
LATEST = VERSIONS[-1]

MESSAGES = frozenset(f"{kind}{chunk}" for kind in (
    "AIMessage", "HumanMessage", "ChatMessage", "SystemMessage", "FunctionMessage",
    "ToolMessage") for chunk in ("", "Chunk"))
# The definitions a message schema brings along, dropped with the messages.
MESSAGE_PARTS = frozenset({"ToolCall", "ToolCallChunk", "InvalidToolCall", "UsageMetadata",
                           "InputTokenDetails", "OutputTokenDetails"})


@router.get("/mcp", summary="MCP: no server-to-client stream (405)")
async def get_mcp() -> Response:
    return Response(status_code=405)


@router.delete("/mcp", summary="MCP: no session to end (404)")
async def delete_mcp() -> Response:
    return Response(status_code=404)


@router.post("/mcp", summary="MCP (Streamable HTTP): a JSON-RPC message")
async def post_mcp(request: Request) -> Response:
    try:
        message = json.loads(await request.body())
    except ValueError:
        return _bad("Invalid JSON")
    accept = request.headers.get("accept", "")
    if "application/json" not in accept and "text/event-stream" not in accept:
        return _bad("Accept header must include application/json or text/event-stream")
    if not isinstance(message, dict):
        return _bad("Invalid message format.")
    if message.get("jsonrpc") != "2.0":
        return _bad("Invalid JSON-RPC message. Missing or invalid jsonrpc version.")
    method, id_ = message.get("method"), message.get("id")
    if id_ is None or not method:
        if id_ is not None or method:  # a response or a notification: nothing to answer
            return Response(status_code=202)
        return _bad("Invalid message format. A message is to be either a JSON-RPC "
                    "request, response, or notification.Please see the Messages section "
                    "of the Streamable HTTP RFC for more information.")
    params = message.get("params")
    params = {} if params is None else params
    if not isinstance(params, dict):
        answer = _error(INVALID_PARAMS, "Invalid params: expected an object.")
    elif method == "initialize":
        answer = _initialize(params)
    elif method == "ping":
        answer = {"result": {}}
    elif method == "tools/list":
        answer = await _list_tools(request, params)
    elif method == "tools/call":
        answer = await _call_tool(request, params)
    else:
        answer = _error(METHOD_NOT_FOUND, f"Method not found: {method}")
    return JSONResponse({"jsonrpc": "2.0", "id": id_, **answer})


def _bad(text: str) -> Response:
    return JSONResponse({"error": text}, status_code=400)


def _error(code: int, text: str) -> dict[str, Any]:
    return {"error": {"code": code, "message": text}}


def _initialize(params: dict[str, Any]) -> dict[str, Any]:
    from graphrun.server.app import VERSION

    asked = params.get("protocolVersion")
    return {"result": {"protocolVersion": asked if asked in VERSIONS else LATEST,
                       "capabilities": {"tools": {"listChanged": False}},
                       "serverInfo": {"name": "LangGraph", "version": VERSION}}}


def tool_name(name: str) -> str:
    """An assistant's name as an MCP tool name (`[a-zA-Z0-9_.-]{1,128}`): blanks become
    one `_`, other characters go."""
    return re.sub(r"[^a-zA-Z0-9_.\-]", "", re.sub(r"\s+", "_", name.strip()))[:128]


def simplify(schema: dict[str, Any]) -> dict[str, Any]:
    """The input schema for a model to fill: a list of LangChain messages becomes a string
    (the user's message; LangGraph's `add_messages` takes one) and their definitions go.
    Changes `schema`."""
    defs = schema.get("$defs")
    if not defs or not MESSAGES & set(defs):
        return schema
    for name in MESSAGES | MESSAGE_PARTS:
        defs.pop(name, None)
    if not defs:
        del schema["$defs"]
    props = schema.get("properties") or {}
    for key, prop in props.items():
        if _is_messages(prop):
            props[key] = {"type": "string", "title": prop.get("title", key),
                          "description": "The user message to send to the agent."}
    return schema


def _is_messages(prop: Any) -> bool:
    if not isinstance(prop, dict) or prop.get("type") != "array":
        return False
    items = prop.get("items") or {}
    return any(str(c.get("$ref", "")).removeprefix("#/$defs/") in MESSAGES
               for c in items.get("oneOf") or items.get("anyOf") or [])


def _served(request: Request, part: str) -> None:
    if part in request.app.state.http.disabled:
        raise NotFound(f"MCP: the {part} of this server are turned off "
                       f"(langgraph.json http.disable_{part}).")


async def _assistants(request: Request, offset: int, limit: int) -> list[dict[str, Any]]:
    """The assistants the caller may see, as POST /assistants/search answers them."""
    _served(request, "assistants")
    found = await assistants.search(
        assistants.AssistantSearch(offset=offset, limit=limit), request)
    page: list[dict[str, Any]] = json.loads(bytes(found.body))
    return page


def _offset(cursor: Any) -> int:
    try:
        return max(int(cursor), 0)
    except (TypeError, ValueError):
        return 0


async def _list_tools(request: Request, params: dict[str, Any]) -> dict[str, Any]:
    offset = _offset(params.get("cursor"))
    page = await _assistants(request, offset, PAGE)
    named: dict[str, dict[str, Any]] = {}
    for a in page:
        name = tool_name(a["name"])
        if name in named:
            _log.warning("MCP: assistant %s is named %r as %s is: not listed as a tool",
                         a["assistant_id"], a["name"], named[name]["assistant_id"])
            continue
        named[name] = a
    tools = await asyncio.gather(*(_tool(request, n, a) for n, a in named.items()))
    result: dict[str, Any] = {"tools": [t for t in tools if t is not None]}
    if len(page) == PAGE:
        # A string, as MCP's cursor is (LangGraph's server answers the number).
        result["nextCursor"] = str(offset + PAGE)
    return {"result": result}


async def _tool(request: Request, name: str, assistant: dict[str, Any]
                ) -> dict[str, Any] | None:
    try:
        found = await assistants.schemas(assistant["assistant_id"], request)
        schema = found.get("input_schema")
        if schema is None:
            raise ValueError("the graph has no input schema")
        schema = simplify(copy.deepcopy(schema))  # the graph's own is cached: a copy
    except Exception as exc:
        _log.warning("MCP: assistant %s (%r) is not listed as a tool: its input schema "
                     "failed: %s", assistant["assistant_id"], assistant["name"], exc)
        return None
    schema.setdefault("type", "object")  # MCP: an object's schema
    return {"name": name, "title": assistant["name"],
            "description": assistant.get("description") or
            f"Tool based on the {assistant['name']} assistant",
            "inputSchema": schema,
            "annotations": {"readOnlyHint": False, "destructiveHint": False,
                            "idempotentHint": False, "openWorldHint": True}}


async def _call_tool(request: Request, params: dict[str, Any]) -> dict[str, Any]:
    name = params.get("name")
    if not name:
        return _error(INVALID_PARAMS, f"Unknown tool: {name}")
    matching = [a for a in await _assistants(request, 0, MOST)
                if tool_name(a["name"]) == name]
    if not matching:
        return _error(INVALID_PARAMS, f"Unknown tool: {name}")
    if len(matching) > 1:
        return _error(INVALID_PARAMS, "Multiple tools found with the same name.")
    _served(request, "runs")
    body = runs.RunCreate(assistant_id=matching[0]["assistant_id"],
                          input=params.get("arguments", {}), context=params.get("context"))
    answered = await runs.wait_stateless(body, request)
    output = json.loads(bytes(answered.body))  # what a client of POST /runs/wait reads
    if isinstance(output, dict) and "__error__" in output:  # a node failed
        return {"result": {"isError": True, "content": [
            {"type": "text", "text": str(output["__error__"].get("error"))}]}}
    return {"result": {"content": [{"type": "text", "text": repr(output)}]}}
