"""The graphs the saved histories in histories/ were recorded with.

Each is compiled at module level under its registered name. Changing a node's
*code* is fine (nodes run in activities, whose results are in the history);
changing the graph's shape changes the workflow's commands and breaks replay.
"""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

from graphrun import END, START, StateGraph, interrupt
from graphrun.func import entrypoint, task


# -- approval: START -> request_approval (interrupt) -> charge_card ---------------------
class ApprovalState(TypedDict, total=False):
    amount: int
    approved: bool
    charged: bool


def request_approval(state: ApprovalState) -> dict[str, Any]:
    ok = interrupt({"question": "Approve charge?", "amount": state["amount"]})
    return {"approved": bool(ok)}


def charge_card(state: ApprovalState) -> dict[str, Any]:
    return {"charged": bool(state.get("approved"))}


approval = (StateGraph(ApprovalState)
            .add_node("request_approval", request_approval)
            .add_node("charge_card", charge_card)
            .add_edge(START, "request_approval")
            .add_edge("request_approval", "charge_card")
            .add_edge("charge_card", END)
            .compile(name="approval"))


# -- parallel: START -> a, b (both interrupt) -> c ---------------------------------------
class ParallelState(TypedDict, total=False):
    answers: Annotated[list[str], operator.add]
    done: bool


def ask_a(state: ParallelState) -> dict[str, Any]:
    return {"answers": [f"a={interrupt('question a')}"]}


def ask_b(state: ParallelState) -> dict[str, Any]:
    return {"answers": [f"b={interrupt('question b')}"]}


def join_c(state: ParallelState) -> dict[str, Any]:
    return {"done": True}


parallel = (StateGraph(ParallelState)
            .add_node("a", ask_a)
            .add_node("b", ask_b)
            .add_node("c", join_c)
            .add_edge(START, "a")
            .add_edge(START, "b")
            .add_edge(["a", "b"], "c")
            .add_edge("c", END)
            .compile(name="parallel"))


# -- flaky: START -> broken (fails while FLAKY_BROKEN), steady (succeeds) -> END ---------
FLAKY_BROKEN = True
"""While True, the `broken` node raises; record.py flips it to False before resuming."""


class FlakyState(TypedDict, total=False):
    log: Annotated[list[str], operator.add]


def broken(state: FlakyState) -> dict[str, Any]:
    if FLAKY_BROKEN:
        raise RuntimeError("downstream service unavailable")
    return {"log": ["broken ok"]}


def steady(state: FlakyState) -> dict[str, Any]:
    return {"log": ["steady ok"]}


flaky = (StateGraph(FlakyState)
         .add_node("broken", broken)  # no retry policy: runs once
         .add_node("steady", steady)
         .add_edge(START, "broken")
         .add_edge(START, "steady")
         .add_edge("broken", END)
         .add_edge("steady", END)
         .compile(name="flaky"))


# -- looping: ask (interrupts every round) loops until the answer is 0 -------------------
class LoopState(TypedDict, total=False):
    rounds: int
    last: int


def ask(state: LoopState) -> dict[str, Any]:
    answer = interrupt({"round": state.get("rounds", 0)})
    return {"rounds": state.get("rounds", 0) + 1, "last": int(answer)}


def again(state: LoopState) -> str:
    return END if state.get("last") == 0 else "ask"


looping = (StateGraph(LoopState)
           .add_node("ask", ask)
           .add_edge(START, "ask")
           .add_conditional_edges("ask", again, ["ask", END])
           .compile(name="looping"))


GRAPHS: dict[str, Any] = {"approval": approval, "parallel": parallel, "flaky": flaky,
                          "looping": looping}


# -- deadline: START -> decide (interrupt with a 1 s deadline, default False) -> END -------
class DeadlineState(TypedDict, total=False):
    decision: bool


def decide(state: DeadlineState) -> dict[str, Any]:
    return {"decision": bool(interrupt("Decide within a second", timeout=1.0, default=False))}


deadline = (StateGraph(DeadlineState)
            .add_node("decide", decide)
            .add_edge(START, "decide")
            .add_edge("decide", END)
            .compile(name="deadline"))

GRAPHS["deadline"] = deadline


# -- routed: START -> ask (interrupt) -> big | small by a routing function ----------------
class RoutedState(TypedDict, total=False):
    x: int
    path: str


def ask_x(state: RoutedState) -> dict[str, Any]:
    return {"x": interrupt("x?")}


def route_x(state: RoutedState) -> str:
    return "big" if state["x"] > 10 else "small"


routed = (StateGraph(RoutedState)
          .add_node("ask", ask_x)
          .add_node("big", lambda s: {"path": "big"})
          .add_node("small", lambda s: {"path": "small"})
          .add_edge(START, "ask")
          .add_conditional_edges("ask", route_x, ["big", "small"])
          .add_edge("big", END)
          .add_edge("small", END)
          .compile(name="routed"))

GRAPHS["routed"] = routed


# -- functional: an @entrypoint with two tasks in one round, an interrupt, one more task --
@task
def quote(item: str) -> int:
    return len(item)


@task
def settle(total: int) -> str:
    return f"settled {total}"


@entrypoint(name="functional")
def functional(items: list[str]) -> dict[str, Any]:
    total = sum(f.result() for f in [quote(i) for i in items])
    if not interrupt({"approve": total}):
        return {"total": total, "receipt": None}
    return {"total": total, "receipt": settle(total).result()}


GRAPHS["functional"] = functional


# -- streamed: START -> talk (writes two custom chunks) -> ask (interrupt) -> END --------
class StreamedState(TypedDict, total=False):
    said: int
    answer: Any


def talk(state: StreamedState) -> dict[str, Any]:
    from graphrun import get_stream_writer

    write = get_stream_writer()
    write({"line": 1})
    write({"line": 2})
    return {"said": 2}


def ask_streamed(state: StreamedState) -> dict[str, Any]:
    return {"answer": interrupt("go on?")}


streamed = (StateGraph(StreamedState)
            .add_node("talk", talk)
            .add_node("ask", ask_streamed)
            .add_edge(START, "talk")
            .add_edge("talk", "ask")
            .add_edge("ask", END)
            .compile(name="streamed"))

GRAPHS["streamed"] = streamed


# -- agent: LangChain's create_agent with the approval middleware, served as is -----------
def _agent() -> Any:
    from examples import agent_approval

    return agent_approval.make_agent()


GRAPHS["agent"] = _agent()


# -- slow: START -> first -> wait (sleeps `seconds`) -> END: runs to cancel and interrupt --
class SlowState(TypedDict, total=False):
    seconds: float
    done: list[str]


async def _slow_wait(state: SlowState) -> dict[str, Any]:
    import asyncio

    await asyncio.sleep(state.get("seconds", 0))
    return {"done": [*state.get("done", []), "wait"]}


slow = (StateGraph(SlowState)
        .add_node("first", lambda s: {"done": [*s.get("done", []), "first"]})
        .add_node("wait", _slow_wait)
        .add_edge(START, "first").add_edge("first", "wait").add_edge("wait", END)
        .compile(name="slow"))

GRAPHS["slow"] = slow


# -- subgraph: START -> prepare -> review (a subgraph: check -> ask (interrupt), routed on
# to approve or reject) -----------------------------------------------------------------
class ReviewState(TypedDict, total=False):
    amount: int
    notes: Annotated[list[str], operator.add]


def _ask_reviewer(state: ReviewState) -> dict[str, Any]:
    return {"notes": [f"answer:{interrupt({'amount': state['amount']})}"]}


def _route_review(state: ReviewState) -> str:
    return "approve" if state.get("amount", 0) < 100 else "reject"


review = (StateGraph(ReviewState)
          .add_node("check", lambda s: {"notes": ["checked"]})
          .add_node("ask", _ask_reviewer)
          .add_node("approve", lambda s: {"notes": ["approved"]})
          .add_node("reject", lambda s: {"notes": ["rejected"]})
          .add_edge(START, "check")
          .add_conditional_edges("check", _route_review, {"approve": "ask", "reject": "reject"})
          .add_edge("ask", "approve")
          .compile())

subgraph = (StateGraph(ReviewState)
            .add_node("prepare", lambda s: {"notes": ["prepared"]})
            .add_node("review", review)
            .add_edge(START, "prepare").add_edge("prepare", "review").add_edge("review", END)
            .compile(name="subgraph"))

GRAPHS["subgraph"] = subgraph


# -- race: START -> quick and wait (sleeps `seconds`), side by side ----------------------
class RaceState(TypedDict, total=False):
    seconds: float
    done: Annotated[list[str], operator.add]


async def _race_wait(state: RaceState) -> dict[str, Any]:
    import asyncio

    await asyncio.sleep(state.get("seconds", 0))
    return {"done": ["wait"]}


race = (StateGraph(RaceState)
        .add_node("quick", lambda s: {"done": ["quick"]})
        .add_node("wait", _race_wait)
        .add_edge(START, "quick").add_edge(START, "wait")
        .compile(name="race"))

GRAPHS["race"] = race


# -- handled: START -> fails (its error handler fails while HANDLER_BROKEN), steady ------
HANDLER_BROKEN = True
"""While True, `fails`' error handler raises; record.py flips it before resuming."""


def _fails(state: FlakyState) -> dict[str, Any]:
    raise RuntimeError("downstream service unavailable")


def _recover(state: FlakyState, error: Any) -> dict[str, Any]:
    if HANDLER_BROKEN:
        raise RuntimeError("handler broken too")
    return {"log": [f"recovered from {error.node}: {error.error}"]}


handled = (StateGraph(FlakyState)
           .add_node("fails", _fails, error_handler=_recover)
           .add_node("steady", steady)
           .add_edge(START, "fails").add_edge(START, "steady")
           .compile(name="handled"))

GRAPHS["handled"] = handled
