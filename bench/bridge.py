"""History bytes of one agent turn with 5 tool calls: LangChain's `create_agent`
served through the bridge against the same turn written natively with graphrun.

    .venv/bin/python bench/bridge.py          # ~10 s: one dev server, one thread each

Both run the same deterministic model (5 tool calls, then an answer) and the same
tool, on one worker, on a fresh dev server. Printed: events and payload bytes of
each thread's history (`Payload.data` summed over every event, as bench/temporal.py
counts), by event type, then `bridge-vs-native: bytes=<r> events=<r>`.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from temporalio.client import Client

from bench.temporal import history_stats
from graphrun import END, START, Send, StateGraph
from graphrun.client import GraphClient
from graphrun.devserver import DevServer
from graphrun.messages import MessagesState
from graphrun.worker import create_worker

CALLS = 5
REQUEST = {"messages": [{"role": "user", "content": "Check stock of items 0 to 4"}]}


@tool
def stock(item: int) -> str:
    """How many of an item are in stock."""
    return f"item {item}: {10 * item} in stock"


class Model(BaseChatModel):
    @property
    def _llm_type(self) -> str:
        return "bench"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Model:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        if isinstance(messages[-1], HumanMessage):
            reply = AIMessage(content="", id="ai-1", tool_calls=[
                {"id": f"call_{i}", "name": "stock", "args": {"item": i}}
                for i in range(CALLS)])
        else:
            n = sum(isinstance(m, ToolMessage) for m in messages)
            reply = AIMessage(content=f"{n} items checked.", id="ai-2")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def native() -> Any:
    """The same turn by hand: model, one Send per tool call, back to the model."""
    model = Model()

    def call_model(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    def route(state: MessagesState) -> Any:
        calls = state["messages"][-1].tool_calls
        return [Send("tools", c) for c in calls] if calls else END

    def tools(call: dict[str, Any]) -> dict[str, Any]:
        return {"messages": [ToolMessage(stock.invoke(call["args"]), tool_call_id=call["id"],
                                         name=call["name"])]}

    return (StateGraph(MessagesState).add_node("model", call_model).add_node("tools", tools)
            .add_edge(START, "model").add_conditional_edges("model", route, ["tools", END])
            .add_edge("tools", "model").compile(name="native"))


async def main() -> None:
    async with DevServer(ui=False) as srv:
        client = await Client.connect(srv.address)
        queue = f"bench-bridge-{uuid.uuid4()}"
        graphs = {"bridged": create_agent(Model(), [stock]), "native": native()}
        async with create_worker(client, graphs, task_queue=queue):
            gc = GraphClient(client, task_queue=queue)
            stats = {}
            for name in graphs:
                tid = f"{name}-{uuid.uuid4().hex[:8]}"
                out = await gc.graph(name).ainvoke(REQUEST, {"configurable": {"thread_id": tid}})
                assert out["messages"][-1].content == f"{CALLS} items checked.", out
                stats[name] = await history_stats(client, tid)
    for name, s in stats.items():
        top = ", ".join(f"{k}={v}" for k, v in s["bytes_by_type"].most_common(4))
        print(f"{name:8} events={s['events']:3} bytes={s['bytes']:6}  ({top})")
    b, n = stats["bridged"], stats["native"]
    print(f"bridge-vs-native: bytes={b['bytes'] / n['bytes']:.2f} "
          f"events={b['events'] / n['events']:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
