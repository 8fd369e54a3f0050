"""Conformance scenarios: written once, run on every driver.

Each scenario builds its graph from ``driver.api``, runs it only through the
driver surface (ainvoke / aget_state / aupdate_state / aget_state_history /
astream) and returns a JSON-able transcript. Side effects are counted in
closures and the counters go into the transcript, so "this node must not
re-run" is checked too.
"""

from __future__ import annotations

import asyncio
import operator
from dataclasses import dataclass, field
from typing import Annotated, Literal, TypedDict

from pydantic import BaseModel

from .harness import (
    Driver,
    norm_result,
    norm_snapshot,
    norm_stream,
    outcome,
    scenario,
)


def counter() -> dict[str, int]:
    return {}


def bump(c: dict[str, int], key: str) -> None:
    c[key] = c.get(key, 0) + 1


def ids_of(result: dict) -> list[str]:
    return [i.id for i in result.get("__interrupt__", ())]


# ---------------------------------------------------------------------------
# Seed examples
# ---------------------------------------------------------------------------


class PurchaseState(TypedDict):
    item: str
    amount: float
    status: str


def _purchase_graph(driver: Driver, calls: dict):
    api = driver.api

    def request_approval(state: PurchaseState):
        bump(calls, "request_approval")
        decision = api.interrupt(
            {"question": "Approve this purchase?", "item": state["item"], "amount": state["amount"]}
        )
        if not decision:
            return {"status": "rejected"}
        return {"status": "approved"}

    def charge_card(state: PurchaseState):
        bump(calls, "charge_card")
        return {"status": "charged"}

    b = api.StateGraph(PurchaseState)
    b.add_node("request_approval", request_approval)
    b.add_node("charge_card", charge_card)
    b.add_edge(api.START, "request_approval")
    b.add_edge("request_approval", "charge_card")
    b.add_edge("charge_card", api.END)
    return driver.compile(b)


async def _purchase(driver: Driver, decision: bool) -> list:
    calls = counter()
    g = _purchase_graph(driver, calls)
    cfg = driver.config("order-42")
    t = []
    t.append(
        await outcome(
            g.ainvoke({"item": "GPU rental, 8 hours", "amount": 96.0, "status": "pending"}, cfg)
        )
    )
    t.append(dict(calls))
    t.append(await outcome(g.ainvoke(driver.api.Command(resume=decision), cfg)))
    t.append(dict(calls))
    t.append(norm_snapshot(await g.aget_state(cfg)))
    return t


@scenario("purchase_approve")
async def purchase_approve(driver: Driver) -> list:
    return await _purchase(driver, True)


@scenario("purchase_reject")
async def purchase_reject(driver: Driver) -> list:
    # As in the seed, the edge request_approval -> charge_card is unconditional:
    # a rejection is overwritten by "charged".
    return await _purchase(driver, False)


class ApprovalState(TypedDict):
    action_details: str
    status: Literal["pending", "approved", "rejected"] | None


async def _approval_goto(driver: Driver, decision: bool) -> list:
    api = driver.api
    calls = counter()

    def approval_node(state: ApprovalState):
        bump(calls, "approval")
        d = api.interrupt({"question": "Approve this action?", "details": state["action_details"]})
        return api.Command(goto="proceed" if d else "cancel")

    def proceed_node(state: ApprovalState):
        bump(calls, "proceed")
        return {"status": "approved"}

    def cancel_node(state: ApprovalState):
        bump(calls, "cancel")
        return {"status": "rejected"}

    b = api.StateGraph(ApprovalState)
    b.add_node("approval", approval_node, destinations=("proceed", "cancel"))
    b.add_node("proceed", proceed_node)
    b.add_node("cancel", cancel_node)
    b.add_edge(api.START, "approval")
    b.add_edge("proceed", api.END)
    b.add_edge("cancel", api.END)
    g = driver.compile(b)
    cfg = driver.config("approval-123")
    t = [await outcome(g.ainvoke({"action_details": "Transfer $500", "status": "pending"}, cfg))]
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(await outcome(g.ainvoke(api.Command(resume=decision), cfg)))
    t.append(dict(calls))
    return t


@scenario("approval_goto_proceed")
async def approval_goto_proceed(driver: Driver) -> list:
    return await _approval_goto(driver, True)


@scenario("approval_goto_cancel")
async def approval_goto_cancel(driver: Driver) -> list:
    return await _approval_goto(driver, False)


class ReviewState(TypedDict):
    generated_text: str


@scenario("review_and_edit")
async def review_and_edit(driver: Driver) -> list:
    api = driver.api

    def review_node(state: ReviewState):
        updated = api.interrupt(
            {"instruction": "Review and edit this content", "content": state["generated_text"]}
        )
        return {"generated_text": updated}

    b = api.StateGraph(ReviewState)
    b.add_node("review", review_node)
    b.add_edge(api.START, "review")
    b.add_edge("review", api.END)
    g = driver.compile(b)
    cfg = driver.config("review-42")
    t = [await outcome(g.ainvoke({"generated_text": "Initial draft"}, cfg))]
    t.append(await outcome(g.ainvoke(api.Command(resume="Improved draft after review"), cfg)))
    t.append(norm_snapshot(await g.aget_state(cfg)))
    return t


class AgentState(TypedDict):
    messages: list[dict]


async def _email_tool(driver: Driver, response: dict) -> list:
    api = driver.api
    calls = counter()
    sent: list = []

    def send_email(to: str, subject: str, body: str) -> str:  # plain function, no @tool
        bump(calls, "send_email")
        r = api.interrupt(
            {
                "action": "send_email",
                "to": to,
                "subject": subject,
                "body": body,
                "message": "Approve sending this email?",
            }
        )
        if r.get("action") == "approve":
            final = (r.get("to", to), r.get("subject", subject), r.get("body", body))
            sent.append(list(final))
            return f"Email sent to {final[0]} with subject '{final[1]}'"
        return "Email cancelled by user"

    def stub_model(messages: list[dict]) -> dict:
        bump(calls, "model")
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "name": "send_email",
                    "args": {
                        "to": "alice@example.com",
                        "subject": "Meeting",
                        "body": "See you at 10.",
                    },
                }
            ],
        }

    def agent_node(state: AgentState):
        return {"messages": state["messages"] + [stub_model(state["messages"])]}

    def tools_node(state: AgentState):
        call = state["messages"][-1]["tool_calls"][0]
        result = send_email(**call["args"])
        return {"messages": state["messages"] + [{"role": "tool", "content": result}]}

    b = api.StateGraph(AgentState)
    b.add_node("agent", agent_node)
    b.add_node("tools", tools_node)
    b.add_edge(api.START, "agent")
    b.add_edge("agent", "tools")
    b.add_edge("tools", api.END)
    g = driver.compile(b)
    cfg = driver.config("email-workflow")
    t = [
        await outcome(
            g.ainvoke(
                {
                    "messages": [
                        {
                            "role": "user",
                            "content": "Send an email to alice@example.com about the meeting",
                        }
                    ]
                },
                cfg,
            )
        )
    ]
    t.append(await outcome(g.ainvoke(api.Command(resume=response), cfg)))
    t.append({"calls": dict(calls), "sent": sent})
    return t


@scenario("email_tool_approve_edited_subject")
async def email_tool_approve_edited_subject(driver: Driver) -> list:
    return await _email_tool(driver, {"action": "approve", "subject": "Updated subject"})


@scenario("email_tool_cancel")
async def email_tool_cancel(driver: Driver) -> list:
    return await _email_tool(driver, {"action": "reject"})


class FormState(TypedDict):
    age: int | None


@scenario("validation_loop")
async def validation_loop(driver: Driver) -> list:
    api = driver.api
    calls = counter()

    def get_age_node(state: FormState):
        bump(calls, "collect_age")
        prompt = "What is your age?"
        while True:
            answer = api.interrupt(prompt)
            if isinstance(answer, int) and answer > 0:
                return {"age": answer}
            prompt = f"'{answer}' is not a valid age. Please enter a positive number."

    b = api.StateGraph(FormState)
    b.add_node("collect_age", get_age_node)
    b.add_edge(api.START, "collect_age")
    b.add_edge("collect_age", api.END)
    g = driver.compile(b)
    cfg = driver.config("form-1")
    r1 = await g.ainvoke({"age": None}, cfg)
    t = [norm_result(r1)]
    r2 = await g.ainvoke(api.Command(resume="thirty"), cfg)
    t.append(norm_result(r2))
    snap = await g.aget_state(cfg)
    t.append(norm_snapshot(snap))
    # Surprise (1.2.24, unlike the 1.2.9 seed): same task, yet a new id — the id
    # hashes the namespace plus the number of answers already given (0 -> bare ns).
    t.append({"same_id_across_resume": ids_of(r1) == ids_of(r2)})
    t.append(await outcome(g.ainvoke(api.Command(resume=30), cfg)))
    t.append(dict(calls))
    return t


class MultiState(TypedDict):
    name: str
    age: int
    city: str


@scenario("three_interrupts_one_node")
async def three_interrupts_one_node(driver: Driver) -> list:
    api = driver.api
    calls = counter()

    def ask(state: MultiState):
        bump(calls, "ask")
        name = api.interrupt("name?")
        age = api.interrupt({"q": "age?", "name": name})
        city = api.interrupt(["city?", name, age])
        return {"name": name, "age": age, "city": city}

    b = api.StateGraph(MultiState)
    b.add_node("ask", ask)
    b.add_edge(api.START, "ask")
    b.add_edge("ask", api.END)
    g = driver.compile(b)
    cfg = driver.config("multi")
    t = []
    rs = [await g.ainvoke({"name": "", "age": 0, "city": ""}, cfg)]
    t.append(norm_result(rs[-1]))
    for v in ("Ada", 36):
        rs.append(await g.ainvoke(api.Command(resume=v), cfg))
        t.append(norm_result(rs[-1]))
        t.append(norm_snapshot(await g.aget_state(cfg)))
    # Surprise: the three interrupts of one node do NOT share an id in 1.2.24
    # (id = xxh3(ns) for the first, xxh3(ns + "|" + n_answered) afterwards).
    t.append({"one_id": len({i for r in rs for i in ids_of(r)}) == 1})
    t.append(await outcome(g.ainvoke(api.Command(resume="London"), cfg)))
    t.append(dict(calls))
    return t


class StepState(TypedDict):
    log: Annotated[list[str], operator.add]


def logging_step(calls, name):
    """A node that counts its runs and appends its name to the "log" key."""

    def node(state: StepState):
        bump(calls, name)
        return {"log": [name]}

    return node


@scenario("static_breakpoints")
async def static_breakpoints(driver: Driver) -> list:
    api = driver.api
    calls = counter()

    b = api.StateGraph(StepState)
    for n in ("node_a", "node_b", "node_c", "node_d"):
        b.add_node(n, logging_step(calls, n))
    b.add_edge(api.START, "node_a")
    b.add_edge("node_a", "node_b")
    b.add_edge("node_b", "node_c")
    b.add_edge("node_c", "node_d")
    b.add_edge("node_d", api.END)
    g = driver.compile(b, interrupt_before=["node_a"], interrupt_after=["node_b", "node_c"])
    cfg = driver.config("some_thread")
    # Static breakpoints put no "__interrupt__" in the result and no interrupts in
    # get_state (only next/tasks show the pause).
    t = [await outcome(g.ainvoke({"log": ["start"]}, cfg))]
    t.append(norm_snapshot(await g.aget_state(cfg)))
    for _ in range(3):
        t.append(await outcome(g.ainvoke(None, cfg)))
        t.append(norm_snapshot(await g.aget_state(cfg)))
        t.append(dict(calls))
    return t


@scenario("runtime_breakpoints")
async def runtime_breakpoints(driver: Driver) -> list:
    """Breakpoints passed to invoke() (not compile()) apply to that run only."""
    api = driver.api
    calls = counter()

    b = api.StateGraph(StepState)
    for n in ("node_a", "node_b", "node_c"):
        b.add_node(n, logging_step(calls, n))
    b.add_edge(api.START, "node_a")
    b.add_edge("node_a", "node_b")
    b.add_edge("node_b", "node_c")
    g = driver.compile(b)
    cfg = driver.config("runtime_bp")
    t = [await outcome(g.ainvoke({"log": []}, cfg, interrupt_before=["node_b"]))]
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(await outcome(g.ainvoke(None, cfg, interrupt_after=["node_b"])))
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(await outcome(g.ainvoke(None, cfg)))
    t.append(dict(calls))
    return t


# ---------------------------------------------------------------------------
# Parallel branches and interrupts
# ---------------------------------------------------------------------------


class ParState(TypedDict):
    log: Annotated[list[str], operator.add]
    answer: str


def _fan(api, b, src, dsts):
    for d in dsts:
        b.add_edge(src, d)


@scenario("parallel_sibling_not_rerun")
async def parallel_sibling_not_rerun(driver: Driver) -> list:
    api = driver.api
    calls = counter()

    def worker(state: ParState):
        bump(calls, "worker")
        return {"log": ["worked"]}

    def asker(state: ParState):
        bump(calls, "asker")
        a = api.interrupt("ok?")
        return {"log": ["asked"], "answer": a}

    def after(state: ParState):
        bump(calls, "after")
        return {"log": ["after"]}

    b = api.StateGraph(ParState)
    b.add_node("worker", worker)
    b.add_node("asker", asker)
    b.add_node("after", after)
    _fan(api, b, api.START, ["worker", "asker"])
    b.add_edge(["worker", "asker"], "after")
    b.add_edge("after", api.END)
    g = driver.compile(b)
    cfg = driver.config("par")
    t = [await outcome(g.ainvoke({"log": [], "answer": ""}, cfg)), dict(calls)]
    t.append(norm_snapshot(await g.aget_state(cfg)))
    # worker's saved write is replayed, not re-run; order is by node name: asked, worked.
    t.append(await outcome(g.ainvoke(api.Command(resume="yes"), cfg)))
    t.append(dict(calls))
    return t


def _two_askers(driver: Driver, calls: dict):
    api = driver.api

    def mk(name):
        def node(state: ParState):
            bump(calls, name)
            a = api.interrupt(f"{name}?")
            return {"log": [f"{name}={a}"]}

        return node

    def join(state: ParState):
        bump(calls, "join")
        return {"answer": ",".join(state["log"])}

    b = api.StateGraph(ParState)
    b.add_node("a", mk("a"))
    b.add_node("b", mk("b"))
    b.add_node("join", join)
    _fan(api, b, api.START, ["a", "b"])
    b.add_edge(["a", "b"], "join")
    b.add_edge("join", api.END)
    return driver.compile(b)


def _by_value(result: dict) -> dict:
    return {i.value: i.id for i in result["__interrupt__"]}


@scenario("parallel_interrupts_id_map")
async def parallel_interrupts_id_map(driver: Driver) -> list:
    api = driver.api
    calls = counter()
    g = _two_askers(driver, calls)
    cfg = driver.config("par2")
    r = await g.ainvoke({"log": [], "answer": ""}, cfg)
    ids = _by_value(r)
    t = [norm_result(r), {"distinct_ids": len(set(ids.values())) == 2}]
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(await outcome(g.ainvoke(api.Command(resume={ids["a?"]: "A", ids["b?"]: "B"}), cfg)))
    t.append(dict(calls))
    return t


@scenario("parallel_interrupts_partial_map")
async def parallel_interrupts_partial_map(driver: Driver) -> list:
    api = driver.api
    calls = counter()
    g = _two_askers(driver, calls)
    cfg = driver.config("par3")
    r = await g.ainvoke({"log": [], "answer": ""}, cfg)
    ids = _by_value(r)
    t = [norm_result(r)]
    r2 = await g.ainvoke(api.Command(resume={ids["b?"]: "B"}), cfg)
    t.append(norm_result(r2))
    t.append({"remaining_id_kept": ids_of(r2) == [ids["a?"]]})
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(dict(calls))
    t.append(await outcome(g.ainvoke(api.Command(resume={ids["a?"]: "A"}), cfg)))
    t.append(dict(calls))
    return t


@scenario("single_resume_two_pending_error")
async def single_resume_two_pending_error(driver: Driver) -> list:
    api = driver.api
    calls = counter()
    g = _two_askers(driver, calls)
    cfg = driver.config("par4")
    t = [await outcome(g.ainvoke({"log": [], "answer": ""}, cfg))]
    # LangGraph: RuntimeError("When there are multiple pending interrupts, you must specify the interrupt id ...")
    t.append(await outcome(g.ainvoke(api.Command(resume="both"), cfg)))
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(dict(calls))
    return t


# ---------------------------------------------------------------------------
# Send fan-out
# ---------------------------------------------------------------------------


class MapState(TypedDict):
    items: list[str]
    results: Annotated[list[str], operator.add]


@scenario("send_fanout_reducer")
async def send_fanout_reducer(driver: Driver) -> list:
    api = driver.api
    calls = counter()

    def fan(state: MapState):
        return [api.Send("work", {"item": it}) for it in state["items"]]

    def work(arg: dict):
        bump(calls, "work")
        return {"results": [arg["item"].upper()]}

    def done(state: MapState):
        bump(calls, "done")
        return {"results": ["done"]}

    b = api.StateGraph(MapState)
    b.add_node("work", work)
    b.add_node("done", done)
    b.add_conditional_edges(api.START, fan, ["work"])
    b.add_edge("work", "done")
    b.add_edge("done", api.END)
    g = driver.compile(b)
    cfg = driver.config("map")
    t = [await outcome(g.ainvoke({"items": ["x", "y", "z"], "results": []}, cfg)), dict(calls)]
    t.append(norm_snapshot(await g.aget_state(cfg)))
    return t


@scenario("send_fanout_interrupt")
async def send_fanout_interrupt(driver: Driver) -> list:
    api = driver.api
    calls = counter()

    def fan(state: MapState):
        return [api.Send("work", {"item": it}) for it in state["items"]]

    def work(arg: dict):
        bump(calls, "work:" + arg["item"])
        if arg["item"] == "y":
            ok = api.interrupt({"approve": arg["item"]})
            return {"results": [f"y:{ok}"]}
        return {"results": [arg["item"].upper()]}

    b = api.StateGraph(MapState)
    b.add_node("work", work)
    b.add_conditional_edges(api.START, fan, ["work"])
    b.add_edge("work", api.END)
    g = driver.compile(b)
    cfg = driver.config("map2")
    t = [await outcome(g.ainvoke({"items": ["x", "y", "z"], "results": []}, cfg)), dict(calls)]
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(await outcome(g.ainvoke(api.Command(resume=True), cfg)))
    t.append(dict(calls))
    return t


# ---------------------------------------------------------------------------
# Subgraphs
# ---------------------------------------------------------------------------


class SubState(TypedDict):
    text: str
    trail: Annotated[list[str], operator.add]


@scenario("subgraph_node_interrupt")
async def subgraph_node_interrupt(driver: Driver) -> list:
    api = driver.api
    calls = counter()

    def inner_prep(state: SubState):
        bump(calls, "inner_prep")
        return {"trail": ["inner_prep"]}

    def inner_ask(state: SubState):
        bump(calls, "inner_ask")
        name = api.interrupt({"ask": "name?", "text": state["text"]})
        return {"text": f"hello {name}", "trail": ["inner_ask"]}

    sb = api.StateGraph(SubState)
    sb.add_node("inner_prep", inner_prep)
    sb.add_node("inner_ask", inner_ask)
    sb.add_edge(api.START, "inner_prep")
    sb.add_edge("inner_prep", "inner_ask")
    sb.add_edge("inner_ask", api.END)
    sub = sb.compile()  # inherits the parent's checkpointer

    def before(state: SubState):
        bump(calls, "before")
        return {"trail": ["before"]}

    def after(state: SubState):
        bump(calls, "after")
        return {"trail": ["after"]}

    b = api.StateGraph(SubState)
    b.add_node("before", before)
    b.add_node("sub", sub)
    b.add_node("after", after)
    b.add_edge(api.START, "before")
    b.add_edge("before", "sub")
    b.add_edge("sub", "after")
    b.add_edge("after", api.END)
    g = driver.compile(b)
    cfg = driver.config("subnode")
    t = [await outcome(g.ainvoke({"text": "hi", "trail": []}, cfg)), dict(calls)]
    t.append(norm_snapshot(await g.aget_state(cfg)))
    # The subgraph returns its whole state, so the parent's operator.add reducer
    # appends "before" a second time: trail == [before, before, inner_prep, inner_ask, after].
    t.append(await outcome(g.ainvoke(api.Command(resume="Bob"), cfg)))
    t.append(dict(calls))
    return t


@scenario("subgraph_as_function")
async def subgraph_as_function(driver: Driver) -> list:
    api = driver.api
    calls = counter()

    def node_in_subgraph(state: SubState):
        bump(calls, "node_in_subgraph")  # re-executes on resume
        name = api.interrupt("What's your name?")
        return {"text": f"name={name}", "trail": ["inner"]}

    sb = api.StateGraph(SubState)
    sb.add_node("inner", node_in_subgraph)
    sb.add_edge(api.START, "inner")
    sb.add_edge("inner", api.END)
    subgraph = sb.compile()

    def node_in_parent_graph(state: SubState):
        bump(calls, "node_in_parent_graph")  # re-executes on resume
        res = subgraph.invoke({"text": state["text"], "trail": []})
        return {"text": res["text"], "trail": ["parent"] + res["trail"]}

    b = api.StateGraph(SubState)
    b.add_node("parent", node_in_parent_graph)
    b.add_edge(api.START, "parent")
    b.add_edge("parent", api.END)
    g = driver.compile(b)
    cfg = driver.config("subfn")
    t = [await outcome(g.ainvoke({"text": "", "trail": []}, cfg)), dict(calls)]
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(await outcome(g.ainvoke(api.Command(resume="Ada"), cfg)))
    t.append(dict(calls))
    return t


# ---------------------------------------------------------------------------
# State manipulation: update_state, new input, time travel
# ---------------------------------------------------------------------------


class DocState(TypedDict):
    draft: str
    notes: Annotated[list[str], operator.add]
    approved: bool


def _doc_graph(driver: Driver, calls: dict):
    api = driver.api

    def write(state: DocState):
        bump(calls, "write")
        return {"draft": state["draft"] + "!", "notes": ["written"]}

    def review(state: DocState):
        bump(calls, "review")
        ok = api.interrupt({"draft": state["draft"], "notes": state["notes"]})
        return {"approved": ok, "notes": ["reviewed"]}

    def publish(state: DocState):
        bump(calls, "publish")
        return {"notes": [f"published {state['draft']} approved={state['approved']}"]}

    b = api.StateGraph(DocState)
    b.add_node("write", write)
    b.add_node("review", review)
    b.add_node("publish", publish)
    b.add_edge(api.START, "write")
    b.add_edge("write", "review")
    b.add_edge("review", "publish")
    b.add_edge("publish", api.END)
    return driver.compile(b)


@scenario("update_state_while_paused")
async def update_state_while_paused(driver: Driver) -> list:
    api = driver.api
    calls = counter()
    g = _doc_graph(driver, calls)
    cfg = driver.config("doc1")
    t = [await outcome(g.ainvoke({"draft": "v1", "notes": [], "approved": False}, cfg))]
    await g.aupdate_state(cfg, {"draft": "v2", "notes": ["edited"]})
    # Surprise: after update_state the snapshot still has next == ["review"] but
    # no pending interrupt; the resume value is still consumed by the re-run.
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(await outcome(g.ainvoke(api.Command(resume=True), cfg)))
    t.append(dict(calls))
    return t


@scenario("update_state_as_node")
async def update_state_as_node(driver: Driver) -> list:
    calls = counter()
    g = _doc_graph(driver, calls)
    cfg = driver.config("doc2")
    t = [await outcome(g.ainvoke({"draft": "v1", "notes": [], "approved": False}, cfg))]
    # Acting as "review" skips the interrupt: next becomes ("publish",).
    await g.aupdate_state(cfg, {"approved": True, "notes": ["manual"]}, as_node="review")
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(await outcome(g.ainvoke(None, cfg)))
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(dict(calls))
    return t


class CountState(TypedDict):
    n: int
    seen: Annotated[list[int], operator.add]


@scenario("new_input_finished_thread")
async def new_input_finished_thread(driver: Driver) -> list:
    api = driver.api
    calls = counter()

    def inc(state: CountState):
        bump(calls, "inc")
        return {"n": state["n"] + 1, "seen": [state["n"]]}

    b = api.StateGraph(CountState)
    b.add_node("inc", inc)
    b.add_edge(api.START, "inc")
    b.add_edge("inc", api.END)
    g = driver.compile(b)
    cfg = driver.config("again")
    t = [await outcome(g.ainvoke({"n": 1, "seen": []}, cfg))]
    # New input on a finished thread continues from the last state: "seen" accumulates.
    t.append(await outcome(g.ainvoke({"n": 10}, cfg)))
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(dict(calls))
    return t


@scenario("time_travel")
async def time_travel(driver: Driver) -> list:
    api = driver.api
    calls = counter()
    g = _doc_graph(driver, calls)
    cfg = driver.config("tt")
    t = [await outcome(g.ainvoke({"draft": "v1", "notes": [], "approved": False}, cfg))]
    t.append(await outcome(g.ainvoke(api.Command(resume=True), cfg)))
    history = await g.aget_state_history(cfg)
    # Newest first; steps -1 (input), 0, 1, 2, 3.
    t.append([norm_snapshot(s, step=True) for s in history])
    # Go back to the checkpoint right before "review" ran (next == ["review"]).
    before_review = next(s for s in history if list(s.next) == ["review"])
    # Time travel drops the cached resume: the interrupt fires again.
    t.append(await outcome(g.ainvoke(None, before_review.config)))
    snap = await g.aget_state(cfg)
    t.append(norm_snapshot(snap))
    t.append(await outcome(g.ainvoke(api.Command(resume=False), cfg)))
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(dict(calls))
    return t


# ---------------------------------------------------------------------------
# Command
# ---------------------------------------------------------------------------


class RouteState(TypedDict):
    path: Annotated[list[str], operator.add]
    flag: str


@scenario("command_goto_from_node")
async def command_goto_from_node(driver: Driver) -> list:
    api = driver.api

    def start(state: RouteState):
        return api.Command(goto="right")

    def left(state: RouteState):
        return {"path": ["left"]}

    def right(state: RouteState):
        return {"path": ["right"]}

    b = api.StateGraph(RouteState)
    b.add_node("start", start, destinations=("left", "right"))
    b.add_node("left", left)
    b.add_node("right", right)
    b.add_edge(api.START, "start")
    b.add_edge("left", api.END)
    b.add_edge("right", api.END)
    g = driver.compile(b)
    cfg = driver.config("goto")
    return [
        await outcome(g.ainvoke({"path": [], "flag": ""}, cfg)),
        norm_snapshot(await g.aget_state(cfg)),
    ]


@scenario("command_update_goto")
async def command_update_goto(driver: Driver) -> list:
    api = driver.api

    def start(state: RouteState):
        return api.Command(update={"path": ["start"], "flag": "set"}, goto=["left", "right"])

    def left(state: RouteState):
        return {"path": [f"left:{state['flag']}"]}

    def right(state: RouteState):
        return {"path": [f"right:{state['flag']}"]}

    b = api.StateGraph(RouteState)
    b.add_node("start", start, destinations=("left", "right"))
    b.add_node("left", left)
    b.add_node("right", right)
    b.add_edge(api.START, "start")
    g = driver.compile(b)
    cfg = driver.config("updgoto")
    return [
        await outcome(g.ainvoke({"path": [], "flag": ""}, cfg)),
        norm_snapshot(await g.aget_state(cfg)),
    ]


@scenario("resume_with_update")
async def resume_with_update(driver: Driver) -> list:
    api = driver.api
    calls = counter()

    def ask(state: RouteState):
        bump(calls, "ask")
        a = api.interrupt({"flag_now": state["flag"]})
        return {"path": [f"ask:{a}:{state['flag']}"]}

    b = api.StateGraph(RouteState)
    b.add_node("ask", ask)
    b.add_edge(api.START, "ask")
    b.add_edge("ask", api.END)
    g = driver.compile(b)
    cfg = driver.config("resupd")
    t = [await outcome(g.ainvoke({"path": [], "flag": "old"}, cfg))]
    # The update is applied before the interrupted node re-runs: it sees flag "new".
    t.append(
        await outcome(
            g.ainvoke(api.Command(resume="ok", update={"flag": "new", "path": ["upd"]}), cfg)
        )
    )
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(dict(calls))
    return t


# ---------------------------------------------------------------------------
# Edges
# ---------------------------------------------------------------------------


def _route_graph(driver: Driver, router, path_map=None, extra_edges=True):
    api = driver.api

    def mk(name):
        def node(state: RouteState):
            return {"path": [name]}

        return node

    b = api.StateGraph(RouteState)
    for n in ("start", "left", "right"):
        b.add_node(n, mk(n))
    b.add_edge(api.START, "start")
    if path_map is None:
        b.add_conditional_edges("start", router)
    else:
        b.add_conditional_edges("start", router, path_map)
    b.add_edge("left", api.END)
    b.add_edge("right", api.END)
    return driver.compile(b)


@scenario("conditional_path_map")
async def conditional_path_map(driver: Driver) -> list:
    def router(state: RouteState) -> str:
        return "go_right" if state["flag"] == "r" else "go_left"

    g = _route_graph(driver, router, {"go_left": "left", "go_right": "right"})
    t = []
    for i, flag in enumerate(["r", "l"]):
        cfg = driver.config(f"pm{i}")
        t.append(await outcome(g.ainvoke({"path": [], "flag": flag}, cfg)))
    return t


@scenario("conditional_list")
async def conditional_list(driver: Driver) -> list:
    def router(state: RouteState) -> list[str]:
        return ["right", "left"]  # writes still applied by node name: left, right

    g = _route_graph(driver, router)
    cfg = driver.config("cl")
    return [
        await outcome(g.ainvoke({"path": [], "flag": ""}, cfg)),
        norm_snapshot(await g.aget_state(cfg)),
    ]


@scenario("conditional_end")
async def conditional_end(driver: Driver) -> list:
    api = driver.api

    def router(state: RouteState):
        return api.END if state["flag"] == "stop" else "left"

    g = _route_graph(driver, router)
    t = []
    for i, flag in enumerate(["stop", "go"]):
        cfg = driver.config(f"ce{i}")
        t.append(await outcome(g.ainvoke({"path": [], "flag": flag}, cfg)))
        t.append(norm_snapshot(await g.aget_state(cfg)))
    return t


@scenario("join_edge")
async def join_edge(driver: Driver) -> list:
    api = driver.api
    calls = counter()

    def mk(name):
        def node(state: RouteState):
            bump(calls, name)
            return {"path": [name]}

        return node

    b = api.StateGraph(RouteState)
    for n in ("a", "b", "b2", "c"):
        b.add_node(n, mk(n))
    b.add_edge(api.START, "a")
    b.add_edge(api.START, "b")
    b.add_edge("b", "b2")
    b.add_edge(["a", "b2"], "c")  # c waits for both a and b2 (which is a step later)
    b.add_edge("c", api.END)
    g = driver.compile(b)
    cfg = driver.config("join")
    return [await outcome(g.ainvoke({"path": [], "flag": ""}, cfg)), dict(calls)]


@scenario("defer_node")
async def defer_node(driver: Driver) -> list:
    """A deferred node waits for every branch, across a pause on the longer one."""
    api = driver.api
    calls = counter()

    def mk(name, ask=False):
        def node(state: RouteState):
            bump(calls, name)
            if ask:
                api.interrupt(f"go on after {name}?")
            return {"path": [name]}

        return node

    b = api.StateGraph(RouteState)
    b.add_node("a", mk("a"))
    b.add_node("b", mk("b"))
    b.add_node("b2", mk("b2", ask=True))
    b.add_node("final", mk("final"), defer=True)
    b.add_edge(api.START, "a")
    b.add_edge(api.START, "b")
    b.add_edge("b", "b2")
    b.add_edge("a", "final")
    b.add_edge("b2", "final")
    g = driver.compile(b)
    cfg = driver.config("defer")
    t = [await outcome(g.ainvoke({"path": [], "flag": ""}, cfg))]
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(await outcome(g.ainvoke(api.Command(resume=True), cfg)))
    t.append(dict(calls))
    return t


@scenario("add_sequence")
async def add_sequence(driver: Driver) -> list:
    api = driver.api

    def one(state: RouteState):
        return {"path": ["one"]}

    def two(state: RouteState):
        return {"path": ["two"]}

    def three(state: RouteState):
        return {"path": ["three"]}

    b = api.StateGraph(RouteState)
    b.add_sequence([one, two, three])
    b.add_edge(api.START, "one")
    g = driver.compile(b)
    cfg = driver.config("seq")
    t = [await outcome(g.ainvoke({"path": [], "flag": ""}, cfg))]
    t.append([norm_snapshot(s, step=True) for s in await g.aget_state_history(cfg)])
    return t


@scenario("parallel_reducer")
async def parallel_reducer(driver: Driver) -> list:
    api = driver.api

    def mk(name):
        def node(state: RouteState):
            return {"path": [name]}

        return node

    b = api.StateGraph(RouteState)
    for n in ("zeta", "alpha", "mid"):
        b.add_node(n, mk(n))
        b.add_edge(api.START, n)
    g = driver.compile(b)
    cfg = driver.config("pr")
    # Surprise: parallel writes reach the reducer sorted by node name (task path),
    # not in add_node/add_edge order: ["alpha", "mid", "zeta"].
    return [await outcome(g.ainvoke({"path": [], "flag": ""}, cfg))]


@scenario("parallel_lastvalue_error")
async def parallel_lastvalue_error(driver: Driver) -> list:
    api = driver.api

    def mk(name):
        def node(state: RouteState):
            return {"flag": name}

        return node

    b = api.StateGraph(RouteState)
    for n in ("p", "q"):
        b.add_node(n, mk(n))
        b.add_edge(api.START, n)
    g = driver.compile(b)
    cfg = driver.config("lv")
    # LangGraph raises InvalidUpdateError (a plain Exception subclass) -> "other".
    t = [await outcome(g.ainvoke({"path": [], "flag": ""}, cfg))]
    # Surprise: get_state applies the step's saved writes and raises the same error again.
    t.append(await outcome(g.aget_state(cfg), norm_snapshot))
    t.append(
        await outcome(g.aget_state_history(cfg), lambda h: [norm_snapshot(x, step=True) for x in h])
    )
    return t


# ---------------------------------------------------------------------------
# State schemas and node signatures
# ---------------------------------------------------------------------------


class PydState(BaseModel):
    name: str
    count: int = 0
    tags: Annotated[list[str], operator.add] = []


@scenario("pydantic_state")
async def pydantic_state(driver: Driver) -> list:
    api = driver.api
    seen = []

    def greet(state: PydState):
        seen.append(type(state).__name__)
        return {"count": state.count + 1, "tags": ["greet"]}

    def ask(state: PydState):
        ans = api.interrupt({"name": state.name, "count": state.count})
        return {"name": ans, "tags": ["ask"]}

    b = api.StateGraph(PydState)
    b.add_node("greet", greet)
    b.add_node("ask", ask)
    b.add_edge(api.START, "greet")
    b.add_edge("greet", "ask")
    b.add_edge("ask", api.END)
    g = driver.compile(b)
    cfg = driver.config("pyd")
    t = [await outcome(g.ainvoke({"name": "x"}, cfg))]
    t.append(await outcome(g.ainvoke(api.Command(resume="y"), cfg)))
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(seen)
    return t


@dataclass
class DcState:
    name: str
    count: int = 0
    tags: Annotated[list[str], operator.add] = field(default_factory=list)


@scenario("dataclass_state")
async def dataclass_state(driver: Driver) -> list:
    api = driver.api
    seen = []

    def greet(state: DcState):
        seen.append(type(state).__name__)
        return {"count": state.count + 1, "tags": ["greet"]}

    b = api.StateGraph(DcState)
    b.add_node("greet", greet)
    b.add_edge(api.START, "greet")
    b.add_edge("greet", api.END)
    g = driver.compile(b)
    cfg = driver.config("dc")
    t = [await outcome(g.ainvoke({"name": "x"}, cfg))]
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(seen)
    return t


class CfgState(TypedDict):
    out: str


@scenario("node_with_config")
async def node_with_config(driver: Driver) -> list:
    api = driver.api

    def node(state: CfgState, config):
        return {"out": f"user={config['configurable'].get('user')}"}

    b = api.StateGraph(CfgState)
    b.add_node("node", node)
    b.add_edge(api.START, "node")
    b.add_edge("node", api.END)
    g = driver.compile(b)
    cfg = driver.config("cfg", user="alice")
    return [await outcome(g.ainvoke({"out": ""}, cfg))]


@scenario("async_nodes")
async def async_nodes(driver: Driver) -> list:
    api = driver.api
    calls = counter()

    async def first(state: RouteState):
        bump(calls, "first")
        await asyncio.sleep(0)
        return {"path": ["first"]}

    async def second(state: RouteState):
        bump(calls, "second")
        ans = api.interrupt("async?")
        await asyncio.sleep(0)
        return {"path": [f"second:{ans}"]}

    b = api.StateGraph(RouteState)
    b.add_node("first", first)
    b.add_node("second", second)
    b.add_edge(api.START, "first")
    b.add_edge("first", "second")
    b.add_edge("second", api.END)
    g = driver.compile(b)
    cfg = driver.config("async")
    t = [await outcome(g.ainvoke({"path": [], "flag": ""}, cfg))]
    t.append(await outcome(g.ainvoke(api.Command(resume="yes"), cfg)))
    t.append(dict(calls))
    return t


@scenario("node_returns_none")
async def node_returns_none(driver: Driver) -> list:
    api = driver.api
    calls = counter()

    def noop(state: RouteState):
        bump(calls, "noop")
        return None

    def last(state: RouteState):
        return {"path": ["last"]}

    b = api.StateGraph(RouteState)
    b.add_node("noop", noop)
    b.add_node("last", last)
    b.add_edge(api.START, "noop")
    b.add_edge("noop", "last")
    b.add_edge("last", api.END)
    g = driver.compile(b)
    cfg = driver.config("none")
    t = [await outcome(g.ainvoke({"path": ["in"], "flag": "f"}, cfg))]
    t.append(
        norm_stream(
            await g.astream(
                {"path": ["in"], "flag": "f"}, driver.config("none2"), stream_mode="updates"
            )
        )
    )
    t.append(dict(calls))
    return t


class LoopState(TypedDict):
    round: int
    log: Annotated[list[str], operator.add]


@scenario("interrupt_in_loop")
async def interrupt_in_loop(driver: Driver) -> list:
    api = driver.api
    calls = counter()

    def work(state: LoopState):
        bump(calls, "work")
        return {"round": state["round"] + 1, "log": [f"work{state['round'] + 1}"]}

    def approve(state: LoopState):
        bump(calls, "approve")
        ans = api.interrupt({"round": state["round"]})
        return {"log": [f"approve{state['round']}:{ans}"]}

    def route(state: LoopState):
        return "work" if state["round"] < 2 else api.END

    b = api.StateGraph(LoopState)
    b.add_node("work", work)
    b.add_node("approve", approve)
    b.add_edge(api.START, "work")
    b.add_edge("work", "approve")
    b.add_conditional_edges("approve", route, ["work", api.END])
    g = driver.compile(b)
    cfg = driver.config("loop")
    r1 = await g.ainvoke({"round": 0, "log": []}, cfg)
    t = [norm_result(r1)]
    r2 = await g.ainvoke(api.Command(resume="a"), cfg)
    t.append(norm_result(r2))
    # A new task in a later step: its interrupt gets a new id.
    t.append({"new_id_next_round": ids_of(r1) != ids_of(r2)})
    t.append(norm_snapshot(await g.aget_state(cfg), step=True))
    t.append(await outcome(g.ainvoke(api.Command(resume="b"), cfg)))
    t.append(dict(calls))
    return t


# ---------------------------------------------------------------------------
# Streaming
# ---------------------------------------------------------------------------


@scenario("stream_updates_interrupt")
async def stream_updates_interrupt(driver: Driver) -> list:
    calls = counter()
    g = _doc_graph(driver, calls)
    cfg = driver.config("su")
    t = [
        norm_stream(
            await g.astream(
                {"draft": "v1", "notes": [], "approved": False}, cfg, stream_mode="updates"
            )
        )
    ]
    t.append(
        norm_stream(await g.astream(driver.api.Command(resume=True), cfg, stream_mode="updates"))
    )
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(dict(calls))
    return t


@scenario("stream_values_interrupt")
async def stream_values_interrupt(driver: Driver) -> list:
    calls = counter()
    g = _doc_graph(driver, calls)
    cfg = driver.config("sv")
    t = [
        norm_stream(
            await g.astream(
                {"draft": "v1", "notes": [], "approved": False}, cfg, stream_mode="values"
            )
        )
    ]
    t.append(
        norm_stream(await g.astream(driver.api.Command(resume=True), cfg, stream_mode="values"))
    )
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(dict(calls))
    return t


# ---------------------------------------------------------------------------
# Errors and get_state
# ---------------------------------------------------------------------------


@scenario("subgraph_command_parent")
async def subgraph_command_parent(driver: Driver) -> list:
    api = driver.api
    calls = counter()

    def inner_decide(state: SubState):
        bump(calls, "inner_decide")
        ok = api.interrupt({"ask": "escalate?"})
        # Jump in the parent graph: update its state and go to one of its nodes.
        return api.Command(graph=api.Command.PARENT, goto="escalated" if ok else "normal",
                           update={"trail": ["decided"]})

    sb = api.StateGraph(SubState)
    sb.add_node("inner_decide", inner_decide)
    sb.add_edge(api.START, "inner_decide")
    sub = sb.compile()

    def escalated(state: SubState):
        bump(calls, "escalated")
        return {"trail": ["escalated"]}

    def normal(state: SubState):
        bump(calls, "normal")
        return {"trail": ["normal"]}

    b = api.StateGraph(SubState)
    b.add_node("sub", sub)
    b.add_node("escalated", escalated)
    b.add_node("normal", normal)
    b.add_edge(api.START, "sub")
    g = driver.compile(b)
    cfg = driver.config("parentcmd")
    t = [await outcome(g.ainvoke({"text": "x", "trail": []}, cfg))]
    t.append(await outcome(g.ainvoke(api.Command(resume=True), cfg)))
    t.append(norm_snapshot(await g.aget_state(cfg)))
    t.append(dict(calls))
    return t


@scenario("resume_without_checkpointer_error")
async def resume_without_checkpointer_error(driver: Driver) -> list:
    api = driver.api

    def ask(state: ReviewState):
        return {"generated_text": api.interrupt("q")}

    b = api.StateGraph(ReviewState)
    b.add_node("ask", ask)
    b.add_edge(api.START, "ask")
    b.add_edge("ask", api.END)
    g = driver.compile(b, checkpointer=None)
    cfg = driver.config("nocp")
    # Without a checkpointer an interrupt still surfaces in the result.
    t = [await outcome(g.ainvoke({"generated_text": "a"}, cfg))]
    # LangGraph: RuntimeError("Cannot use Command(resume=...) without checkpointer").
    t.append(await outcome(g.ainvoke(api.Command(resume="x"), cfg)))
    return t


@scenario("get_state_interrupted")
async def get_state_interrupted(driver: Driver) -> list:
    calls = counter()
    g = _doc_graph(driver, calls)
    cfg = driver.config("gs1")
    await g.ainvoke({"draft": "v1", "notes": [], "approved": False}, cfg)
    snap = await g.aget_state(cfg)
    t = [norm_snapshot(snap, step=True)]
    t.append(
        {
            "task_interrupt_ids_match": [i.id for i in snap.interrupts]
            == [i.id for task in snap.tasks for i in task.interrupts]
        }
    )
    return t


@scenario("get_state_completed")
async def get_state_completed(driver: Driver) -> list:
    calls = counter()
    g = _doc_graph(driver, calls)
    cfg = driver.config("gs2")
    await g.ainvoke({"draft": "v1", "notes": [], "approved": False}, cfg)
    await g.ainvoke(driver.api.Command(resume=True), cfg)
    return [norm_snapshot(await g.aget_state(cfg), step=True)]


@scenario("get_state_unknown_thread")
async def get_state_unknown_thread(driver: Driver) -> list:
    calls = counter()
    g = _doc_graph(driver, calls)
    return [norm_snapshot(await g.aget_state(driver.config("never-run")), step=True)]


@scenario("interrupt_value_types")
async def interrupt_value_types(driver: Driver) -> list:
    api = driver.api

    def ask(state: RouteState):
        a = api.interrupt(None)
        b_ = api.interrupt(0)
        c = api.interrupt([1, {"k": [True, 2.5]}])
        return {"path": [repr((a, b_, c))]}

    b = api.StateGraph(RouteState)
    b.add_node("ask", ask)
    b.add_edge(api.START, "ask")
    b.add_edge("ask", api.END)
    g = driver.compile(b)
    cfg = driver.config("types")
    t = [await outcome(g.ainvoke({"path": [], "flag": ""}, cfg))]
    for v in ({"x": 1}, [1, 2], "s"):
        t.append(await outcome(g.ainvoke(api.Command(resume=v), cfg)))
    return t
