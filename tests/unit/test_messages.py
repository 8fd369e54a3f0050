"""graphrun.messages: LangGraph's add_messages / MessagesState on langchain-core.

The first tests are ported from LangGraph's libs/langgraph/tests/test_messages_state.py
(langchain-ai/langgraph, commit f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f), bodies as
upstream. Then graphrun's own: deterministic ids, coercion, the reducer rule with
LangGraph's add_messages, and one graph run on LangGraph and on graphrun compared.
"""

import subprocess
import sys
import types
from typing import Annotated, Any
from uuid import UUID

import langchain_core
import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)
from typing_extensions import TypedDict

from graphrun import END, START, InMemorySaver, StateGraph
from graphrun.messages import REMOVE_ALL_MESSAGES, MessagesState, add_messages


class _AnyStr(str):
    """Equal to any string (upstream tests/any_str.py's AnyStr())."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str)

    def __hash__(self) -> int:
        return hash(str(self))


def _AnyIdHumanMessage(**kwargs: Any) -> HumanMessage:
    message = HumanMessage(**kwargs)
    message.id = _AnyStr()
    return message


_, CORE_MINOR, CORE_PATCH = (
    int("".join(c for c in v if c.isdigit())) for v in langchain_core.__version__.split(".")
)


# The upstream add_messages / MessagesState tests are ported in
# tests/langgraph_suite/test_messages_state.py; these are graphrun's own.


# -- graphrun: ids are deterministic ------------------------------------------------------
def _ids(messages: list[BaseMessage]) -> list[str | None]:
    return [m.id for m in messages]


def test_ids_are_the_same_for_the_same_merge():
    def merge() -> list[BaseMessage]:
        return add_messages([("user", "hi"), ("ai", "hello")], [("user", "hi"), ("ai", "hello")])

    first, second = merge(), merge()
    assert _ids(first) == _ids(second)
    assert len(set(_ids(first))) == 4  # the same content at another place gets another id
    assert all(UUID(i).version == 4 and str(UUID(i)) == i for i in _ids(first))


def test_ids_depend_on_what_came_before_and_on_content():
    base = add_messages([], [HumanMessage("hi")])
    a = add_messages(base, AIMessage("yes"))[-1].id
    assert add_messages(base, AIMessage("yes"))[-1].id == a
    assert add_messages(base, AIMessage("no"))[-1].id != a  # a fork with another answer
    assert add_messages(add_messages([], HumanMessage("hey")), AIMessage("yes"))[-1].id != a
    # a new message never takes the id of one already in the list
    msgs = add_messages([], [HumanMessage("x")])
    msgs = add_messages(msgs, [HumanMessage("x")])
    msgs = add_messages(msgs, [RemoveMessage(id=msgs[0].id), HumanMessage("x")])
    assert [m.content for m in msgs] == ["x", "x"] and len(set(_ids(msgs))) == 2


def test_ids_on_temporal_mix_in_the_workflow_id(monkeypatch: pytest.MonkeyPatch):
    plain = _ids(add_messages([], [("user", "hi")]))

    def on(workflow_id: str) -> list[str | None]:
        fake = types.SimpleNamespace(in_workflow=lambda: True,
                                     info=lambda: types.SimpleNamespace(workflow_id=workflow_id))
        monkeypatch.setitem(sys.modules, "temporalio.workflow", fake)
        return _ids(add_messages([], [("user", "hi")]))

    a, b = on("thread-a"), on("thread-b")
    assert a == on("thread-a")
    assert len({*a, *b, *plain}) == 3


def test_ids_given_are_kept_and_missing_ones_set_in_place():
    msg = HumanMessage("hi")
    out = add_messages([AIMessage("a", id="keep")], msg)
    assert out[0].id == "keep" and isinstance(out[1].id, str)
    assert out[1] is msg and msg.id == out[1].id  # as upstream: on the caller's object


def test_a_view_gives_copies():
    # A routing function's view, a paused step's state: looking changes nothing.
    from graphrun.channels import viewing

    msg = HumanMessage("hi")
    with viewing():
        out = add_messages([], [msg])
    assert msg.id is None and out[0].id == add_messages([], [HumanMessage("hi")])[0].id


def test_identical_messages_from_parallel_routed_nodes_are_both_kept():
    # A routing function sees the node's writes merged; that merge must not fix their ids.
    def build(StateGraph, MessagesState, START, END):
        b = StateGraph(MessagesState)
        b.add_node("a", lambda s: {"messages": [AIMessage("same")]})
        b.add_node("b", lambda s: {"messages": [AIMessage("same")]})
        b.add_edge(START, "a")
        b.add_edge(START, "b")
        b.add_conditional_edges("a", lambda s: END)
        b.add_conditional_edges("b", lambda s: END)
        return b.compile()

    from langgraph.graph import END as LG_END
    from langgraph.graph import START as LG_START
    from langgraph.graph import MessagesState as LGMessagesState
    from langgraph.graph import StateGraph as LGStateGraph

    inp = {"messages": [("user", "hi")]}
    expected = build(LGStateGraph, LGMessagesState, LG_START, LG_END).invoke(inp)
    got = build(StateGraph, MessagesState, START, END).invoke(inp)
    assert [m.content for m in got["messages"]] == [m.content for m in expected["messages"]]
    assert len({m.id for m in got["messages"]}) == 3


def test_a_finished_sends_message_keeps_its_id_through_a_pause():
    # Two Sends return the same message; one asks first. The one that finished keeps the
    # id the pause showed, and the other does not take it on resume.
    from graphrun import Command, Send, interrupt

    def fan(state: MessagesState) -> list[Send]:
        return [Send("work", {"ask": False}), Send("work", {"ask": True})]

    def work(arg: dict[str, Any]) -> dict[str, Any]:
        if arg["ask"]:
            interrupt("ok?")
        return {"messages": [AIMessage("same")]}

    b = StateGraph(MessagesState)
    b.add_node("work", work)
    b.add_conditional_edges(START, fan)
    g = b.compile(checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}}
    paused = g.invoke({"messages": [("user", "hi")]}, config)
    kept = paused["messages"][-1].id
    assert g.get_state(config).values["messages"][-1].id == kept
    done = g.invoke(Command(resume=True), config)["messages"]
    assert [m.content for m in done] == ["hi", "same", "same"]
    assert done[1].id == kept and len({m.id for m in done}) == 3


# -- graphrun: forms, signature, errors ---------------------------------------------------
def test_coerces_tuples_dicts_strings_and_chunks():
    out = add_messages(
        "first",
        [("user", "u"), ("assistant", "a"), {"role": "system", "content": "s"},
         {"role": "tool", "content": "t", "tool_call_id": "c1"}, "plain",
         AIMessageChunk(content="chunk")])
    assert [(type(m), m.content) for m in out] == [
        (HumanMessage, "first"), (HumanMessage, "u"), (AIMessage, "a"), (SystemMessage, "s"),
        (ToolMessage, "t"), (HumanMessage, "plain"), (AIMessage, "chunk")]


def test_called_without_lists_returns_the_reducer():
    reducer = add_messages(format="langchain-openai")
    assert [m.content for m in reducer([], ("user", "hi"))] == ["hi"]
    assert [m.content for m in add_messages()([], "hi")] == ["hi"]
    with pytest.raises(ValueError, match="Only received: 'left'"):
        add_messages([], None)
    with pytest.raises(ValueError, match="Only received: 'right'"):
        add_messages(None, [])
    with pytest.raises(ValueError, match="Unrecognized format='xml'"):
        add_messages([], [], format="xml")  # type: ignore[call-overload]


def test_langgraphs_add_messages_is_a_graphrun_reducer():
    from langgraph.graph.message import add_messages as lg_add_messages

    class State(TypedDict):
        messages: Annotated[list[AnyMessage], lg_add_messages]

    app = (StateGraph(State).add_node("reply", lambda s: {"messages": [("ai", "pong")]})
           .add_edge(START, "reply").compile())
    out = app.invoke({"messages": [("user", "ping"), HumanMessage("x", id="1")]})
    assert [(type(m), m.content) for m in out["messages"]] == [
        (HumanMessage, "ping"), (HumanMessage, "x"), (AIMessage, "pong")]
    app = (StateGraph(State).add_node("edit", lambda s: {"messages": [RemoveMessage(id="1")]})
           .add_edge(START, "edit").compile())
    assert [m.content for m in app.invoke({"messages": [("user", "a"), HumanMessage(
        "b", id="1")]})["messages"]] == ["a"]


def test_graphruns_add_messages_is_a_langgraph_reducer():
    from langgraph.graph import StateGraph as LGStateGraph

    app = (LGStateGraph(MessagesState).add_node("reply", lambda s: {"messages": "pong"})
           .add_edge(START, "reply").compile())
    out = app.invoke({"messages": [("user", "ping")]})
    assert [(type(m), m.content) for m in out["messages"]] == [
        (HumanMessage, "ping"), (HumanMessage, "pong")]


def test_import_needs_langchain_core_and_never_loads_temporalio_or_langgraph():
    code = ("import sys; sys.modules['langchain_core'] = None\n"
            "try:\n    import graphrun.messages\n"
            "except ImportError as e:\n    print(e)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert "pip install 'graphrun[messages]'" in out.stdout, out
    code = ("import sys, graphrun.messages; print(sorted({m.split('.')[0] for m in sys.modules}"
            " & {'temporalio', 'langgraph'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert out.stdout.strip() == "[]", out


# -- graphrun vs LangGraph on one MessagesState graph --------------------------------------
def _chat_graph(StateGraph: Any, START: Any, END: Any, MessagesState: Any, saver: Any) -> Any:
    def chat(state):
        last = state["messages"][-1]
        if isinstance(last, ToolMessage):
            return {"messages": AIMessageChunk(content=f"done: {last.content}")}
        return {"messages": [AIMessage(content=f"echo: {last.content}", tool_calls=[
            {"name": "lookup", "args": {"q": last.content}, "id": f"call-{len(state['messages'])}"}])]}

    def route(state):
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "tidy"

    def tools(state):
        call = state["messages"][-1].tool_calls[0]
        return {"messages": [ToolMessage(content=f"found {call['args']['q']}",
                                         tool_call_id=call["id"]),
                             {"role": "system", "content": "scratch"}]}

    def drop_scratch(state):
        scratch = [m for m in state["messages"] if isinstance(m, SystemMessage)]
        return {"messages": [RemoveMessage(id=m.id) for m in scratch]}

    def tidy(state):
        first = state["messages"][0]
        return {"messages": [HumanMessage(content=first.content.upper(), id=first.id),
                             ("ai", "tidied")]}

    builder = StateGraph(MessagesState)
    builder.add_node("chat", chat)
    builder.add_node("tools", tools)
    builder.add_node("drop_scratch", drop_scratch)
    builder.add_node("tidy", tidy)
    builder.add_edge(START, "chat")
    builder.add_conditional_edges("chat", route, ["tools", "tidy"])
    builder.add_edge("tools", "drop_scratch")
    builder.add_edge("drop_scratch", "chat")
    builder.add_edge("tidy", END)
    return builder.compile(checkpointer=saver)


def _norm(messages: list[BaseMessage]) -> list[tuple[Any, ...]]:
    return [(type(m).__name__, m.content, [(c["name"], c["args"], c["id"])
                                           for c in getattr(m, "tool_calls", [])],
             getattr(m, "tool_call_id", None)) for m in messages]


def _transcript(graph: Any) -> list[Any]:
    config = {"configurable": {"thread_id": "t1"}}
    out: list[Any] = []
    first = graph.invoke({"messages": [("user", "hi")]}, config)["messages"]
    out.append(_norm(first))
    second = graph.invoke({"messages": "again"}, config)["messages"]
    out.append(_norm(second))
    state = graph.get_state(config).values["messages"]
    out.append(_norm(state))
    # ids: strings, unique, and kept from turn to turn and in the checkpoint
    ids = [m.id for m in state]
    assert all(isinstance(i, str) for i in ids) and len(set(ids)) == len(ids)
    assert [m.id for m in first if m.id in ids] == [m.id for m in first]
    assert ids == [m.id for m in second]
    graph.update_state(config, {"messages": [RemoveMessage(id=ids[1]),
                                             HumanMessage("edited", id=ids[0])]})
    out.append(_norm(graph.get_state(config).values["messages"]))
    graph.update_state(config, {"messages": [RemoveMessage(id=REMOVE_ALL_MESSAGES),
                                             ("user", "fresh")]})
    out.append(_norm(graph.get_state(config).values["messages"]))
    with pytest.raises(ValueError, match="doesn't exist"):
        graph.update_state(config, {"messages": RemoveMessage(id="nope")})
    return out


def test_messages_state_graph_matches_langgraph():
    from langgraph.checkpoint.memory import InMemorySaver as LGSaver
    from langgraph.graph import END as LG_END
    from langgraph.graph import START as LG_START
    from langgraph.graph import MessagesState as LGMessagesState
    from langgraph.graph import StateGraph as LGStateGraph

    expected = _transcript(_chat_graph(LGStateGraph, LG_START, LG_END, LGMessagesState,
                                       LGSaver()))
    got = _transcript(_chat_graph(StateGraph, START, END, MessagesState, InMemorySaver()))
    assert got == expected
    assert expected[0] == [
        ("HumanMessage", "HI", [], None),
        ("AIMessage", "echo: hi", [("lookup", {"q": "hi"}, "call-1")], None),
        ("ToolMessage", "found hi", [], "call-1"),
        ("AIMessage", "done: found hi", [], None),
        ("AIMessage", "tidied", [], None),
    ]


def test_ids_in_process_mix_in_the_thread_id():
    # LangGraph's ids are random: two threads starting alike never share one.
    b = StateGraph(MessagesState)
    b.add_node("reply", lambda s: {"messages": [AIMessage("hello")]})
    b.add_edge(START, "reply")
    graph = b.compile(checkpointer=InMemorySaver())

    def run(tid: str) -> list[str | None]:
        config = {"configurable": {"thread_id": tid}}
        ids = _ids(graph.invoke({"messages": [("user", "hi")]}, config)["messages"])
        graph.update_state(config, {"messages": [("user", "more")]})
        assert _ids(graph.get_state(config).values["messages"])[:2] == ids
        return _ids(graph.get_state(config).values["messages"])

    a, b2 = run("thread-a"), run("thread-b")
    assert len({*a, *b2}) == 6
    streamed = [c for c in graph.stream({"messages": [("user", "hi")]},
                                        {"configurable": {"thread_id": "thread-c"}},
                                        stream_mode="values")][-1]
    assert not {*a, *b2} & set(_ids(streamed["messages"]))
    # The same thread id in a fresh saver gives the same ids (stable, and equal to
    # Temporal's, whose workflow id is the thread id).
    again = b.compile(checkpointer=InMemorySaver())
    assert _ids(again.invoke({"messages": [("user", "hi")]},
                             {"configurable": {"thread_id": "thread-a"}})["messages"]) == a[:2]
    assert _ids(add_messages([], [("user", "hi")])) != a[:1]  # no thread outside a graph


async def test_ids_in_process_mix_in_the_thread_id_async(monkeypatch: pytest.MonkeyPatch):
    b = StateGraph(MessagesState)
    b.add_node("reply", lambda s: {"messages": [AIMessage("hello")]})
    b.add_edge(START, "reply")
    graph = b.compile(checkpointer=InMemorySaver())
    outs = [await graph.ainvoke({"messages": [("user", "hi")]},
                                {"configurable": {"thread_id": t}}) for t in ("x", "y")]
    last = [c async for c in graph.astream({"messages": [("user", "hi")]},
                                           {"configurable": {"thread_id": "z"}},
                                           stream_mode="values")][-1]
    ids = [_ids(o["messages"]) for o in (*outs, last)]
    assert len({i for group in ids for i in group}) == 6
    # the input's id is the one a Temporal workflow named like the thread gives it
    fake = types.SimpleNamespace(in_workflow=lambda: True,
                                 info=lambda: types.SimpleNamespace(workflow_id="x"))
    monkeypatch.setitem(sys.modules, "temporalio.workflow", fake)
    assert _ids(add_messages([], [("user", "hi")])) == ids[0][:1]
