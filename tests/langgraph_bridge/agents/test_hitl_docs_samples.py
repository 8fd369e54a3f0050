"""LangChain's "Human-in-the-loop" docs samples, end to end, as on LangGraph.

Each sample runs on plain LangGraph (`unrouted`), then on graphrun through the bridge
(in-process, and on Temporal: the parent folder's conftest runs every test here a
second time there). The docs' agent (`write_file`, `execute_sql`, `read_data`, the
last one not gated) gets a fake chat model that asks for all three tools in one turn
and then answers "Done." (the docs' own `_ScriptedModel`, from langchain-ai/docs
src/code-samples/langchain/hitl-per-call.py). Samples: the batched mode's decisions
(approve, edit, reject, respond, and several at once), the per-call mode (resume each
call by id), and its invalid answer corrected.

What must match: every message (type, content, tool_call_id, name, status), which
messages share an id across the results, `get_state()` and the streamed chunks (ids
are random on LangGraph: their pattern is compared, not their values), the interrupts
(in no fixed order: sorted by tool), and how often each tool ran.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterator
from itertools import cycle
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from pydantic import ValidationError

from graphrun.errors import InvalidResumeError
from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from tests.langgraph_bridge.routing import unrouted

RAN: Counter[str] = Counter()  # tool runs; the Temporal worker runs in this process


@tool
def write_file(path: str, content: str) -> str:
    """Write content to a file."""
    RAN["write_file"] += 1
    return f"Wrote {len(content)} characters to {path}"


@tool
def execute_sql(query: str) -> str:
    """Run a SQL query."""
    RAN["execute_sql"] += 1
    return "Deleted 42 rows"


@tool
def read_data(table: str) -> str:
    """Read rows from a table."""
    RAN["read_data"] += 1
    return f"3 rows from {table}"


class _ScriptedModel(GenericFakeChatModel):
    """Asks for all three tools in one turn, then answers (the docs' own test model)."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _stream(self, messages: Any, stop: Any = None, run_manager: Any = None,
                **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        message = next(self.messages)
        chunks = [
            {"name": c["name"], "args": json.dumps(c["args"]), "id": c["id"], "index": i}
            for i, c in enumerate(message.tool_calls)
        ]
        chunk = AIMessageChunk(content=message.content, tool_call_chunks=chunks)
        yield ChatGenerationChunk(message=chunk)


_TOOL_CALLS = AIMessage(
    content="",
    tool_calls=[
        {"name": "write_file",
         "args": {"path": "orders_archive.csv", "content": "id,total\n1,20\n"},
         "id": "call_write"},
        {"name": "execute_sql",
         "args": {"query": "DELETE FROM orders WHERE created_at < '2025-01-01'"},
         "id": "call_sql"},
        {"name": "read_data", "args": {"table": "orders"}, "id": "call_read"},
    ],
)


def _agent(mode: str) -> Any:
    """The docs' agent: `Configuring interrupts` (batched) or `Pause once per tool call`."""
    return create_agent(
        model=_ScriptedModel(messages=cycle([_TOOL_CALLS, AIMessage(content="Done.")])),
        tools=[write_file, execute_sql, read_data],
        middleware=[
            HumanInTheLoopMiddleware(
                interrupt_on={
                    "write_file": True,
                    "execute_sql": {"allowed_decisions": ["approve", "reject"]},
                    "read_data": False,
                },
                **({"interrupt_mode": "per_call"} if mode == "per_call" else
                   {"description_prefix": "Tool execution pending approval"}),
            ),
        ],
        checkpointer=InMemorySaver(),
    )


# -- what a run shows, with ids as a pattern ---------------------------------------------
class Record:
    """What a sample saw, in order; each id as the order it first appeared in."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self._labels: dict[str, str] = {}

    def id(self, raw: str | None) -> str | None:
        if raw is None:
            return None
        kind = "run" if raw.startswith("lc_run--") else "uuid"
        return self._labels.setdefault(raw, f"{kind}{len(self._labels)}")

    def message(self, m: BaseMessage) -> tuple[Any, ...]:
        return (m.type, m.content, getattr(m, "tool_call_id", None), m.name,
                getattr(m, "status", None), self.id(m.id))

    def messages(self, label: str, messages: list[BaseMessage]) -> None:
        self.seen.append((label, [self.message(m) for m in messages]))

    def interrupts(self, label: str, interrupts: Any) -> None:
        shown = sorted((i.value.get("name", ""), json.dumps(i.value, sort_keys=True),
                        json.dumps(i.response_schema, sort_keys=True)) for i in interrupts)
        self.seen.append((label, shown))

    def state(self, agent: Any, config: dict[str, Any]) -> None:
        snapshot = agent.get_state(config)
        self.messages("get_state", snapshot.values["messages"])
        self.seen.append(("next", sorted(snapshot.next)))
        self.interrupts("get_state.interrupts", snapshot.interrupts)

    def result(self, label: str, result: Any) -> None:
        self.messages(label, result.value["messages"])
        self.interrupts(f"{label}.interrupts", result.interrupts)

    def stream(self, label: str, chunks: list[tuple[str, Any]]) -> None:
        """'values' chunks in order; 'updates' chunks as a sorted list (sibling tasks
        finish in any order)."""
        values = [(self._values(c), len(c.get("__interrupt__", ()))) for m, c in chunks
                  if m == "values"]
        updates = sorted(repr(self._update(c)) for m, c in chunks if m == "updates")
        self.seen += [(f"{label}.values", values), (f"{label}.updates", updates)]

    def _values(self, chunk: dict[str, Any]) -> list[Any]:
        return [self.message(m) for m in chunk.get("messages", ())]

    def _update(self, chunk: dict[str, Any]) -> Any:
        out: dict[str, Any] = {}
        for node, update in chunk.items():
            if node == "__interrupt__":
                out[node] = len(update)
            elif isinstance(update, dict) and isinstance(update.get("messages"), list):
                out[node] = [self.message(m) for m in update["messages"]]
            else:
                out[node] = update
        return out


def _tool_results(messages: list[BaseMessage]) -> dict[str, tuple[str, Any]]:
    return {m.name: (m.status, m.content) for m in messages if m.type == "tool"}


ASK = {"messages": [{"role": "user", "content": "Archive old orders, then delete them."}]}


# -- the samples ---------------------------------------------------------------------
def batched(write_decision: dict[str, Any], sql_decision: dict[str, Any]
            ) -> Callable[[Record], None]:
    """`Responding to interrupts`: one interrupt listing the gated calls, answered by a
    list of decisions in their order (here: write_file's, then execute_sql's)."""

    def sample(record: Record) -> None:
        agent = _agent("batched")
        config = {"configurable": {"thread_id": "some_id"}}
        result = agent.invoke(ASK, config=config, version="v2")
        record.result("paused", result)
        (request,) = result.interrupts
        assert [a["name"] for a in request.value["action_requests"]] == [
            "write_file", "execute_sql"]
        record.state(agent, config)
        result = agent.invoke(
            Command(resume={"decisions": [write_decision, sql_decision]}),
            config=config, version="v2")
        record.result("resumed", result)
        record.state(agent, config)

    return sample


def per_call(record: Record) -> None:
    """`Pause once per tool call`: read the interrupts, resume each call by id."""
    agent = _agent("per_call")
    config = {"configurable": {"thread_id": "1"}}
    result = agent.invoke(ASK, config=config, version="v2")
    record.result("paused", result)
    # `read_data` isn't gated, so it ran without waiting for the review.
    assert _tool_results(result.value["messages"]) == {
        "read_data": ("success", "3 rows from orders")}
    schemas = {i.value["name"]: i.response_schema for i in result.interrupts}
    assert schemas["write_file"]["discriminator"]["propertyName"] == "type"
    assert sorted(schemas["write_file"]["discriminator"]["mapping"]) == [
        "approve", "edit", "reject", "respond"]
    assert sorted(schemas["execute_sql"]["discriminator"]["mapping"]) == ["approve", "reject"]
    record.state(agent, config)

    decisions = {}
    for interrupt in result.interrupts:
        if interrupt.value["name"] == "execute_sql":
            decisions[interrupt.id] = {
                "type": "reject", "message": "Archive the rows before deleting them."}
        else:
            decisions[interrupt.id] = {"type": "approve"}
    result = agent.invoke(Command(resume=decisions), config=config, version="v2")
    record.result("resumed", result)
    assert not result.interrupts
    assert _tool_results(result.value["messages"]) == {
        "read_data": ("success", "3 rows from orders"),
        "write_file": ("success", "Wrote 14 characters to orders_archive.csv"),
        "execute_sql": ("error", "User rejected the tool call for `execute_sql` with reason: "
                                 "Archive the rows before deleting them."),
    }
    record.state(agent, config)


def per_call_invalid(record: Record) -> None:
    """`Correct an invalid answer`: an edit without `content` is refused, nothing is
    saved, and the corrected answer goes to the same interrupt id."""
    agent = _agent("per_call")
    config = {"configurable": {"thread_id": "2"}}
    result = agent.invoke(ASK, config=config, version="v2")
    record.result("paused", result)
    write_file_interrupt = next(
        interrupt for interrupt in result.interrupts if interrupt.value["name"] == "write_file")
    edit: dict[str, Any] = {
        "type": "edit",
        "edited_action": {"name": "write_file", "args": {"path": "archive/orders_2024.csv"}},
    }
    # graphrun: a refused answer is graphrun's InvalidResumeError (DESIGN.md §4: the same
    # error from both drivers), which names the field pydantic refused.
    with pytest.raises((ValidationError, InvalidResumeError)) as refused:
        agent.invoke(Command(resume={write_file_interrupt.id: edit}), config=config,
                     version="v2")
    if isinstance(refused.value, ValidationError):
        assert [".".join(str(p) for p in e["loc"]) for e in refused.value.errors()] == [
            "edit.edited_action.args.content"]
    else:
        assert "edit.edited_action.args.content" in str(refused.value)
    record.state(agent, config)  # nothing was saved

    edit["edited_action"]["args"]["content"] = "id,total\n1,20\n"
    result = agent.invoke(Command(resume={write_file_interrupt.id: edit}), config=config,
                          version="v2")
    record.result("corrected", result)
    assert [i.value["name"] for i in result.interrupts] == ["execute_sql"]
    status, content = _tool_results(result.value["messages"])["write_file"]
    assert status == "success"
    assert content.endswith("Wrote 14 characters to archive/orders_2024.csv")
    record.state(agent, config)
    result = agent.invoke(Command(resume={result.interrupts[0].id: {"type": "approve"}}),
                          config=config, version="v2")
    record.result("resumed", result)
    assert _tool_results(result.value["messages"])["execute_sql"] == (
        "success", "Deleted 42 rows")
    record.state(agent, config)


def per_call_streamed(record: Record) -> None:
    """The per-call sample with its chunks: the pause's 'values' chunks, then the
    resume's, with both modes streamed."""
    agent = _agent("per_call")
    config = {"configurable": {"thread_id": "3"}}
    modes = ["values", "updates"]
    record.stream("paused", list(agent.stream(ASK, config, stream_mode=modes)))
    record.state(agent, config)
    decisions = {i.id: {"type": "approve"} for i in agent.get_state(config).interrupts}
    record.stream("resumed", list(agent.stream(Command(resume=decisions), config,
                                               stream_mode=modes)))
    record.state(agent, config)


EDIT = {"type": "edit", "edited_action": {
    "name": "write_file", "args": {"path": "archive/orders_2024.csv",
                                   "content": "id,total\n1,20\n"}}}
APPROVE = {"type": "approve"}
REJECT = {"type": "reject", "message": "User rejected this action. Do not retry this tool call."}

SAMPLES: dict[str, Callable[[Record], None]] = {
    "batched-approve": batched(APPROVE, APPROVE),
    "batched-edit": batched(EDIT, APPROVE),
    "batched-reject": batched(APPROVE, REJECT),
    "batched-respond": batched({"type": "respond", "message": "Blue."}, APPROVE),
    "batched-multiple": batched(EDIT, REJECT),
    "per-call": per_call,
    "per-call-invalid": per_call_invalid,
    "per-call-streamed": per_call_streamed,
}


def _run(sample: Callable[[Record], None]) -> tuple[list[Any], dict[str, int]]:
    RAN.clear()
    record = Record()
    sample(record)
    return record.seen, dict(RAN)


@pytest.mark.parametrize("name", list(SAMPLES))
def test_hitl_docs_sample_interrupts_as_on_langgraph(name: str) -> None:
    # "interrupt" in the name: it runs on Temporal too (conftest).
    with unrouted():
        expected = _run(SAMPLES[name])
    seen, ran = _run(SAMPLES[name])
    for (label, want), (got_label, got) in zip(expected[0], seen, strict=True):
        assert (got_label, got) == (label, want), label
    assert ran == expected[1]
