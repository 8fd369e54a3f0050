"""Every example's main() runs in-process (InMemorySaver) and ends in the seed's final state."""

from __future__ import annotations

import importlib
import re
from typing import TypedDict

import pytest

import examples
from examples import (
    approval,
    breakpoints,
    email_tool,
    multi_interrupt,
    purchase,
    purchase_functional,
    review,
    subgraph,
    validation,
)
from graphrun import END, START, StateGraph

INTERRUPT_RE = re.compile(r"^\[Interrupt\(value=.*, id='[0-9a-f]+', response_schema=None\)\]$")


def _interrupt_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if INTERRUPT_RE.match(line)]


@pytest.mark.parametrize("name", examples.EXAMPLES)
def test_module_graph_is_named_and_has_no_checkpointer(name: str) -> None:
    mod = importlib.import_module(f"examples.{name}")
    assert mod.graph.name == name
    assert mod.graph.checkpointer is None
    assert callable(mod.main)
    assert mod.build().name == name


def test_purchase(capsys: pytest.CaptureFixture[str]) -> None:
    final = purchase.main()
    assert final == {"item": "GPU rental, 8 hours", "amount": 96.0, "status": "charged"}
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[Interrupt(value={'question': 'Approve this purchase?', "
                             "'item': 'GPU rental, 8 hours', 'amount': 96.0}, id=")
    assert out[1:] == ["charged"]


@pytest.mark.parametrize(("approve", "status"), [(True, "charged 96.00"),
                                                (False, "rejected")])
def test_purchase_functional(capsys: pytest.CaptureFixture[str], approve: bool,
                             status: str) -> None:
    purchase_functional.CHARGED.clear()
    final = purchase_functional.main(approve=approve)
    assert final == {"item": "GPU rental", "amount": 96.0, "status": status}
    charged = purchase_functional.CHARGED
    assert charged == ([("GPU rental", 96.0)] if approve else [])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[Interrupt(value={'question': 'Approve this purchase?', "
                             "'item': 'GPU rental', 'amount': 96.0}, id=")
    assert out[1:] == [status]


@pytest.mark.parametrize(("approve", "status"), [(True, "approved"), (False, "rejected")])
def test_approval(capsys: pytest.CaptureFixture[str], approve: bool, status: str) -> None:
    final = approval.main(approve=approve)
    assert final == {"action_details": "Transfer $500", "status": status}
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[Interrupt(value={'question': 'Approve this action?', "
                             "'details': 'Transfer $500'}, id=")
    assert out[1:] == [status]


def test_review(capsys: pytest.CaptureFixture[str]) -> None:
    final = review.main()
    assert final == {"generated_text": "Improved draft after review"}
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[Interrupt(value={'instruction': 'Review and edit this content', "
                             "'content': 'Initial draft'}, id=")
    assert out[1:] == ["Improved draft after review"]


def test_email_tool(capsys: pytest.CaptureFixture[str]) -> None:
    email_tool.SENT.clear()
    final = email_tool.main()
    # Sent exactly once, after the approval, with the subject the human edited.
    assert email_tool.SENT == [{"to": "alice@example.com", "subject": "Updated subject",
                                "body": "Hi, a quick note about the meeting."}]
    messages = final["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool"]
    assert messages[1]["tool_calls"][0]["name"] == "send_email"
    assert messages[-1]["content"] == "Email sent to alice@example.com"
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[Interrupt(value={'action': 'send_email', 'to': 'alice@example.com', "
                             "'subject': 'Meeting', ")
    assert out[1] == ("[send_email] to=alice@example.com subject=Updated subject "
                      "body=Hi, a quick note about the meeting.")
    assert "'content': 'Email sent to alice@example.com'" in out[2]


def test_email_tool_cancelled_sends_nothing() -> None:
    from graphrun import Command, InMemorySaver

    email_tool.SENT.clear()
    app = email_tool.build(InMemorySaver())
    config = {"configurable": {"thread_id": "email-cancel"}}
    first = app.invoke({"messages": [{"role": "user", "content": "Email bob@example.org about lunch"}]},
                       config)
    assert first["__interrupt__"][0].value["to"] == "bob@example.org"
    final = app.invoke(Command(resume={"action": "reject"}), config)
    assert final["messages"][-1]["content"] == "Email cancelled by user"
    assert email_tool.SENT == []


def test_validation(capsys: pytest.CaptureFixture[str]) -> None:
    final = validation.main()
    assert final == {"age": 30}
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("[Interrupt(value='What is your age?', id=")
    assert out[1].startswith("[Interrupt(value=\"'thirty' is not a valid age. "
                             "Please enter a positive number.\", id=")
    assert out[2:] == ["30"]


def test_multi_interrupt(capsys: pytest.CaptureFixture[str]) -> None:
    final = multi_interrupt.main()
    assert final == {"name": "Ada", "age": 36, "city": "London"}
    out = capsys.readouterr().out
    questions = _interrupt_lines(out)
    assert [q.split("id=")[0] for q in questions] == [
        "[Interrupt(value=\"What's your name?\", ",
        "[Interrupt(value=\"What's your age?\", ",
        "[Interrupt(value=\"What's your city?\", ",
    ]
    # Each question has its own interrupt id.
    assert len({q.split("id=")[1] for q in questions}) == 3


def test_subgraph(capsys: pytest.CaptureFixture[str]) -> None:
    as_node, as_function = subgraph.main()
    assert as_node == {"name": "Ada", "greeting": "Hello, Ada!", "status": "done"}
    assert as_function == {"name": "Grace", "greeting": "Hello, Grace!", "status": "done"}
    out = capsys.readouterr().out
    assert len(_interrupt_lines(out)) == 2
    assert all("What's your name?" in q for q in _interrupt_lines(out))
    # As LangGraph: the interrupted inner node re-runs; with a function call the
    # parent node re-runs too (seed: "some_code() will re-execute when resumed").
    assert "['prepare', 'ask_name', 'ask_name', 'greet', 'finish']" in out
    assert ("['node_in_parent_graph', 'ask_name', 'node_in_parent_graph', 'ask_name', 'greet']"
            in out)


def test_breakpoints(capsys: pytest.CaptureFixture[str]) -> None:
    final = breakpoints.main()
    assert final == {"visited": ["node_a", "node_b", "node_c"]}
    assert capsys.readouterr().out.splitlines() == [
        "{'visited': []} ('node_a',)",
        "{'visited': ['node_a', 'node_b']} ('node_c',)",
        "{'visited': ['node_a', 'node_b', 'node_c']} ()",
    ]


# -- graphrun deviations found while writing the examples ---------------------------
class _Sub(TypedDict, total=False):
    a: int


class _Parent(TypedDict, total=False):
    a: int
    status: str


def test_subgraph_node_ignores_parent_only_keys() -> None:
    sub = StateGraph(_Sub)
    sub.add_node("n", lambda s: {"a": s.get("a", 0) + 1})
    sub.add_edge(START, "n")
    sub.add_edge("n", END)
    parent = StateGraph(_Parent)
    parent.add_node("sub", sub.compile())
    parent.add_edge(START, "sub")
    parent.add_edge("sub", END)
    assert parent.compile().invoke({"status": "x"}) == {"a": 1, "status": "x"}


def test_agent_approval_matches_langgraph(capsys: pytest.CaptureFixture[str]) -> None:
    """LangChain's agent, bridged, gives what LangGraph gives it in-process."""
    from langgraph.checkpoint.memory import InMemorySaver as LGInMemorySaver
    from langgraph.types import Command

    from examples import agent_approval

    agent_approval.PAID.clear()
    done = agent_approval.main()
    assert "Paid INV-7: 1200.00 EUR" in capsys.readouterr().out
    assert agent_approval.PAID == [{"invoice": "INV-7", "amount": 1200.0}]
    lg = agent_approval.make_agent(LGInMemorySaver())
    config = {"configurable": {"thread_id": "lg"}}
    lg.invoke(agent_approval.REQUEST, config)
    expected = lg.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    assert [(m.type, m.content) for m in done["messages"]] == [
        (m.type, m.content) for m in expected["messages"]]
