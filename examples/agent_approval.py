"""A LangChain agent whose payments wait for a human: `create_agent` with the
human-in-the-loop middleware, run by graphrun unchanged.

The agent is LangChain's own object. ``HumanInTheLoopMiddleware`` pauses before
``pay_invoice`` runs and asks for a decision (approve, edit, reject or respond);
``lookup_vendor`` runs without asking. graphrun converts the agent with
``from_langgraph`` (a worker does it for you), so on Temporal the question waits
durably for as long as it takes, and each tool runs once.

The model is a deterministic stand-in for a tool-calling chat model (no network):
to a request naming an invoice it answers with the two tool calls; once the tools
have answered, it sums up. Payments that were made are appended to ``PAID``, in
the process that runs the tools (the Temporal worker when served remotely).

Answer the question with LangChain's decision format::

    Command(resume={"decisions": [{"type": "approve"}]})
    Command(resume={"decisions": [{"type": "edit", "edited_action":
        {"name": "pay_invoice", "args": {"invoice": "INV-7", "amount": 1000.0}}}]})
    Command(resume={"decisions": [{"type": "reject", "message": "Not this month."}]})
"""

from __future__ import annotations

import re
from typing import Any

from langchain.agents import create_agent
from langchain.agents.middleware import HumanInTheLoopMiddleware
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langgraph.types import Command

from graphrun import InMemorySaver, from_langgraph

NAME = "agent_approval"

PAID: list[dict[str, Any]] = []
"""Invoices paid: {"invoice", "amount"}; each approved payment once."""

MODEL_CALLS: list[int] = []
"""One entry per call of the model (to check it runs once per turn)."""


@tool
def lookup_vendor(vendor: str) -> str:
    """Look up a vendor's payment details."""
    return f"{vendor}: verified, IBAN on file"


@tool
def pay_invoice(invoice: str, amount: float) -> str:
    """Pay an invoice. Needs a human's approval."""
    PAID.append({"invoice": invoice, "amount": amount})
    return f"Paid {invoice}: {amount:.2f} EUR"


class InvoiceModel(BaseChatModel):
    """Answers from the conversation alone, so any worker answers the same."""

    @property
    def _llm_type(self) -> str:
        return "invoice-model"

    def bind_tools(self, tools: Any, **kwargs: Any) -> InvoiceModel:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        MODEL_CALLS.append(len(messages))
        last = messages[-1]
        request = re.search(r"(INV-\d+) from (\w+), ([\d.]+)", str(last.content))
        if isinstance(last, HumanMessage) and request:
            invoice, vendor, amount = request.groups()
            reply = AIMessage(content="", id=f"ai-{len(messages)}", tool_calls=[
                {"id": "call_lookup", "name": "lookup_vendor", "args": {"vendor": vendor}},
                {"id": "call_pay", "name": "pay_invoice",
                 "args": {"invoice": invoice, "amount": float(amount)}}])
        elif isinstance(last, ToolMessage):
            results = [m.content for m in messages if isinstance(m, ToolMessage)]
            reply = AIMessage(content="Done. " + " ".join(map(str, results)),
                              id=f"ai-{len(messages)}")
        else:
            reply = AIMessage(content="Which invoice should I pay?", id=f"ai-{len(messages)}")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def make_agent(checkpointer: Any = None) -> Any:
    """The agent as a LangChain user writes it (LangGraph's CompiledStateGraph)."""
    return create_agent(
        InvoiceModel(), [lookup_vendor, pay_invoice],
        middleware=[HumanInTheLoopMiddleware(interrupt_on={"pay_invoice": True})],
        checkpointer=checkpointer)


agent = make_agent()


def build(checkpointer: Any = None) -> Any:
    return from_langgraph(agent, name=NAME, checkpointer=checkpointer)


graph = build()

REQUEST = {"messages": [{"role": "user", "content": "Pay INV-7 from ACME, 1200 EUR"}]}


def main() -> dict[str, Any]:
    app = build(InMemorySaver())
    config = {"configurable": {"thread_id": "invoice-7"}}
    paused = app.invoke(REQUEST, config)
    print(paused["__interrupt__"][0].value["action_requests"])  # pay_invoice, waiting
    done = app.invoke(Command(resume={"decisions": [{"type": "approve"}]}), config)
    print(done["messages"][-1].content)  # Done. ACME: verified ... Paid INV-7: 1200.00 EUR
    return done


if __name__ == "__main__":
    main()
