"""Interrupt inside a tool (seed 001): approve, edit or cancel an email before it goes out.

The seed uses ``@tool`` from langchain and a Claude model; here ``send_email`` is
a plain function and ``agent`` is a deterministic stub model (no network) that
always decides to call it. ``tools`` runs the requested tool calls; the
``interrupt()`` inside ``send_email`` pauses the graph in the ``tools`` node.
Resume with ``{"action": "approve", ...}`` (optionally overriding ``to``,
``subject`` or ``body``) or anything else to cancel.

An email that is actually sent is appended to the module-level list ``SENT``
(it lives in the process that runs the ``tools`` node: the Temporal worker when
served remotely).
"""

import re
from typing import Any, TypedDict

from graphrun import END, START, Command, InMemorySaver, StateGraph, interrupt

NAME = "email_tool"

SENT: list[dict[str, str]] = []
"""Emails that were approved and "sent": {"to", "subject", "body"}."""


class AgentState(TypedDict):
    messages: list[dict]


def send_email(to: str, subject: str, body: str) -> str:
    """Send an email to a recipient."""

    # Pause before sending; payload surfaces in result["__interrupt__"]
    response = interrupt({
        "action": "send_email",
        "to": to,
        "subject": subject,
        "body": body,
        "message": "Approve sending this email?",
    })

    if isinstance(response, dict) and response.get("action") == "approve":
        final_to = response.get("to", to)
        final_subject = response.get("subject", subject)
        final_body = response.get("body", body)

        # Actually send the email (here: record it; it runs once, after the approval)
        SENT.append({"to": final_to, "subject": final_subject, "body": final_body})
        print(f"[send_email] to={final_to} subject={final_subject} body={final_body}")
        return f"Email sent to {final_to}"

    return "Email cancelled by user"


TOOLS = {"send_email": send_email}


def stub_model(messages: list[dict]) -> dict[str, Any]:
    """A deterministic stand-in for a tool-calling chat model.

    For a user request naming an email address it answers with a
    ``send_email`` tool call; otherwise with plain text.
    """
    last = messages[-1]
    text = str(last.get("content", ""))
    match = re.search(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", text)
    if last.get("role") != "user" or match is None:
        return {"role": "assistant", "content": "Nothing to send."}
    topic = text.split(" about ", 1)[1].strip().rstrip(".") if " about " in text else "your request"
    topic = re.sub(r"^the\s+", "", topic)
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{
            "id": "call_send_email_1",
            "name": "send_email",
            "args": {
                "to": match.group(0),
                "subject": topic[:1].upper() + topic[1:],
                "body": f"Hi, a quick note about the {topic}.",
            },
        }],
    }


def agent_node(state: AgentState):
    # The (stub) model may decide to call the tool; the tool's interrupt pauses before sending
    result = stub_model(state["messages"])
    return {"messages": state["messages"] + [result]}


def tool_node(state: AgentState):
    last = state["messages"][-1]
    results = []
    for call in last.get("tool_calls", []):
        output = TOOLS[call["name"]](**call["args"])
        results.append({"role": "tool", "name": call["name"],
                        "tool_call_id": call["id"], "content": output})
    return {"messages": state["messages"] + results}


def route_after_agent(state: AgentState) -> str:
    return "tools" if state["messages"][-1].get("tool_calls") else END


def build(checkpointer=None):
    builder = StateGraph(AgentState)
    builder.add_node("agent", agent_node)
    builder.add_node("tools", tool_node)
    builder.add_edge(START, "agent")
    builder.add_conditional_edges("agent", route_after_agent, ["tools", END])
    builder.add_edge("tools", END)
    return builder.compile(name=NAME, checkpointer=checkpointer)


graph = build()


def main() -> dict:
    app = build(InMemorySaver())
    config = {"configurable": {"thread_id": "email-workflow"}}
    initial = app.invoke(
        {
            "messages": [
                {"role": "user", "content": "Send an email to alice@example.com about the meeting"}
            ]
        },
        config=config,
    )
    print(initial["__interrupt__"])  # -> [Interrupt(value={'action': 'send_email', ...})]

    # Resume with approval and optionally edited arguments
    resumed = app.invoke(
        Command(resume={"action": "approve", "subject": "Updated subject"}),
        config=config,
    )
    print(resumed["messages"][-1])  # -> Tool result returned by send_email
    return resumed


if __name__ == "__main__":
    main()
