"""MCP at /mcp, as LangGraph's server serves it (graphrun.server.mcp), called with the
official `mcp` client: the assistants as tools with their input schemas, a call that
completes, one that stops at an interrupt, one whose node fails; the transport's plain
answers; custom auth in front of it; `http.disable_mcp`."""

from __future__ import annotations

import ast
import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from typing_extensions import TypedDict

from examples import purchase
from graphrun import START, StateGraph
from graphrun.messages import MessagesState
from graphrun.server.config import http_options, load_config
from graphrun.server.mcp import simplify, tool_name
from tests.server.conftest import _ApiHost, broken
from tests.server.test_auth import GRAPH, SET_UP_CUSTOM_AUTH, _host, _project


class Order(TypedDict, total=False):
    item: str
    quantity: int
    receipt: str


def take(state: Order) -> Order:
    return {"receipt": f"{state.get('quantity', 1)} x {state['item']}"}


ORDERS = StateGraph(Order).add_node("take", take).add_edge(START, "take").compile()


def reply(state: dict) -> dict:
    return {"messages": [{"role": "assistant", "content": f"got {state['messages'][-1].content}"}]}


CHAT = StateGraph(MessagesState).add_node("reply", reply).add_edge(START, "reply").compile()

GRAPHS = {"orders": ORDERS, "chat": CHAT, "purchase": purchase.graph, "broken": broken}


@pytest.fixture(scope="module")
def mcp_api(dev_server: Any) -> Iterator[str]:
    host = _ApiHost(dev_server.address, GRAPHS, api_keys=())
    yield host.url
    host.close()


@asynccontextmanager
async def _session(url: str, headers: dict[str, str] | None = None
                   ) -> AsyncIterator[ClientSession]:
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http, \
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write), \
            ClientSession(read, write) as session:
        yield session


def _wire(model: Any) -> dict[str, Any]:
    """A result as it crossed the wire (the SDK's model, by its JSON names)."""
    out: dict[str, Any] = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    return out


async def _tools(session: ClientSession) -> dict[str, dict[str, Any]]:
    listed = _wire(await session.list_tools())
    assert "nextCursor" not in listed
    return {t["name"]: t for t in listed["tools"]}


async def test_initialize_answers_langgraphs_protocol_version_and_the_tools_capability(
        mcp_api: str) -> None:
    async with _session(mcp_api) as session:
        init = _wire(await session.initialize())
        assert init["protocolVersion"] == "2025-11-25"
        assert init["capabilities"] == {"tools": {"listChanged": False}}
        assert init["serverInfo"]["name"] == "LangGraph"
        assert _wire(await session.send_ping()) == {}


async def test_each_assistant_is_a_tool_with_its_graphs_input_schema(mcp_api: str) -> None:
    async with _session(mcp_api) as session:
        await session.initialize()
        tools = await _tools(session)
    assert set(tools) == set(GRAPHS)
    orders = tools["orders"]
    assert orders["title"] == "orders"
    assert orders["description"] == "Tool based on the orders assistant"
    assert orders["inputSchema"] == ORDERS.get_input_jsonschema()
    assert orders["annotations"] == {"readOnlyHint": False, "destructiveHint": False,
                                     "idempotentHint": False, "openWorldHint": True}
    # A list of LangChain messages is asked for as the user's message, a string.
    chat = tools["chat"]["inputSchema"]
    assert "$defs" not in chat
    assert chat["properties"]["messages"] == {
        "type": "string", "title": "Messages",
        "description": "The user message to send to the agent."}
    assert "$defs" in CHAT.get_input_jsonschema()  # the graph's own schema is untouched


async def test_a_user_assistant_is_a_tool_named_after_its_name(mcp_api: str) -> None:
    name = f"Order desk {uuid.uuid4().hex[:6]}!"
    async with httpx.AsyncClient(base_url=mcp_api, timeout=30) as http:
        made = (await http.post("/assistants", json={
            "graph_id": "orders", "name": name, "description": "Takes the shop's orders.",
            "context": {"shop": "north"}})).json()
    expected = tool_name(name)
    assert expected == name.replace(" ", "_").rstrip("!")
    async with _session(mcp_api) as session:
        await session.initialize()
        for _ in range(100):  # visibility lists a new assistant after a moment
            tools = await _tools(session)
            if expected in tools:
                break
            await asyncio.sleep(0.1)
        tool = tools[expected]
        assert (tool["title"], tool["description"]) == (name, "Takes the shop's orders.")
        called = _wire(await session.call_tool(expected, {"item": "pen", "quantity": 2}))
    assert ast.literal_eval(called["content"][0]["text"])["receipt"] == "2 x pen"
    async with httpx.AsyncClient(base_url=mcp_api, timeout=30) as http:
        await http.delete(f"/assistants/{made['assistant_id']}")


async def test_a_call_runs_the_graph_and_answers_its_output(mcp_api: str) -> None:
    async with _session(mcp_api) as session:
        await session.initialize()
        called = _wire(await session.call_tool("orders", {"item": "pen", "quantity": 3}))
        chat = _wire(await session.call_tool("chat", {"messages": "hello"}))
    # LangGraph's answer: the output's repr, as text; no structured content.
    assert called["content"] == [{"type": "text", "text": repr(
        {"item": "pen", "quantity": 3, "receipt": "3 x pen"})}]
    assert (called.get("isError"), called.get("structuredContent")) == (False, None)
    messages = ast.literal_eval(chat["content"][0]["text"])["messages"]
    assert [(m["type"], m["content"]) for m in messages] == [("human", "hello"),
                                                             ("ai", "got hello")]


async def test_a_call_that_stops_at_an_interrupt_answers_the_question(mcp_api: str) -> None:
    async with _session(mcp_api) as session:
        await session.initialize()
        called = _wire(await session.call_tool("purchase", {
            "item": "GPU rental", "amount": 96.0, "status": "pending"}))
    assert not called.get("isError")
    out = ast.literal_eval(called["content"][0]["text"])
    assert out["status"] == "pending"
    [question] = out["__interrupt__"]
    assert question["value"] == {"question": "Approve this purchase?", "item": "GPU rental",
                                 "amount": 96.0}
    assert question["id"]


async def test_a_failed_node_is_a_tool_error_naming_the_errors_type(mcp_api: str) -> None:
    async with _session(mcp_api) as session:
        await session.initialize()
        called = _wire(await session.call_tool("broken", {"item": "pen"}))
        with pytest.raises(MCPError) as unknown:
            await session.call_tool("nope", {})
    assert (called["isError"], called["content"]) == (
        True, [{"type": "text", "text": "ValueError"}])
    assert (unknown.value.code, unknown.value.message) == (-32602, "Unknown tool: nope")


async def test_the_transports_plain_answers(mcp_api: str) -> None:
    accept = {"Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(base_url=mcp_api, timeout=30) as http:
        assert (await http.get("/mcp", headers=accept)).status_code == 405
        assert (await http.delete("/mcp")).status_code == 404
        note = await http.post("/mcp", headers=accept, json={
            "jsonrpc": "2.0", "method": "notifications/initialized"})
        assert (note.status_code, note.content) == (202, b"")
        old = await http.post("/mcp", headers=accept, json={
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2024-11-05"}})
        assert old.json()["result"]["protocolVersion"] == "2024-11-05"
        unknown = await http.post("/mcp", headers=accept, json={
            "jsonrpc": "2.0", "id": "a", "method": "resources/list"})
        assert unknown.json() == {"jsonrpc": "2.0", "id": "a", "error": {
            "code": -32601, "message": "Method not found: resources/list"}}
        no_accept = await http.post("/mcp", headers={"Accept": "text/html"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "ping"})
        assert (no_accept.status_code, no_accept.json()) == (400, {
            "error": "Accept header must include application/json or text/event-stream"})
        call = await http.post("/mcp", headers=accept, json={
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "orders", "arguments": {"item": "ink"}}})
        assert call.json() == {"jsonrpc": "2.0", "id": 7, "result": {"content": [{
            "type": "text", "text": repr({"item": "ink", "receipt": "1 x ink"})}]}}
        bad = await http.post("/mcp", headers=accept, content=b"{")
        assert (bad.status_code, bad.json()) == (400, {"error": "Invalid JSON"})
        batch = await http.post("/mcp", headers=accept, json=[{"jsonrpc": "2.0"}])
        assert (batch.status_code, batch.json()) == (400, {"error": "Invalid message format."})


def test_simplify_leaves_a_schema_without_messages_alone() -> None:
    schema = ORDERS.get_input_jsonschema()
    assert simplify(json.loads(json.dumps(schema))) == schema


# -- custom auth, and turned off ----------------------------------------------------------
@pytest.fixture(scope="module")
def auth_api(dev_server: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    host = _host(dev_server, _project(tmp_path_factory.mktemp("mcp_auth"),
                                      SET_UP_CUSTOM_AUTH))
    yield host.url
    host.close()


async def test_mcp_is_behind_the_servers_auth(auth_api: str) -> None:
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    accept = {"Accept": "application/json"}
    async with httpx.AsyncClient(base_url=auth_api, timeout=30) as http:
        # The tutorial's `assert authorization` fails: 500, as on LangGraph's server.
        assert (await http.post("/mcp", json=ping, headers=accept)).status_code == 500
        bad = await http.post("/mcp", json=ping, headers={
            **accept, "Authorization": "Bearer nope"})
        assert (bad.status_code, bad.json()) == (401, {"detail": "Invalid token"})
    async with _session(auth_api, {"Authorization": "Bearer user1-token"}) as session:
        await session.initialize()
        assert set(await _tools(session)) == {"agent"}
        called = _wire(await session.call_tool("agent", {}))
    # The run carries the caller, as a run through the REST API does.
    assert ast.literal_eval(called["content"][0]["text"])["user_id"] == "user1"


async def test_http_disable_mcp_turns_it_off(dev_server: Any, tmp_path: Path) -> None:
    (tmp_path / "graph.py").write_text(GRAPH)
    (tmp_path / "langgraph.json").write_text(json.dumps({
        "graphs": {"agent": "./graph.py:graph"}, "http": {"disable_mcp": True}}))
    host = _ApiHost(dev_server.address, load_config(tmp_path / "langgraph.json"),
                    api_keys=(), http=http_options(tmp_path / "langgraph.json"))
    try:
        async with httpx.AsyncClient(base_url=host.url, timeout=30) as http:
            off = await http.post("/mcp", headers={"Accept": "application/json"},
                                  json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
            assert off.status_code == 404
            assert (await http.post("/assistants/search", json={})).status_code == 200
    finally:
        host.close()
