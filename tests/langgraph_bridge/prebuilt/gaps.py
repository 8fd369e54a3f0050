"""Why a ported prebuilt test fails on graphrun: the `reason=` of its strict xfail.

Each one names a difference between running the graph on LangGraph and running it
through `graphrun.bridge.from_langgraph` (via tests/langgraph_bridge/routing.py).
A fix turns the xfail into an XPASS failure: then drop the marker.
"""

STORE = "store not passed through the bridge"

INPUT_IDS = (
    "graphrun's add_messages gives a message that has no id a copy with an id; "
    "LangGraph's sets the id on the message object in place, so the test's own "
    "message objects (the input list, a node's update in the 'updates' stream) "
    "keep id=None where upstream expects an id"
)

FIRST_WRITE = (
    "bridge: LangGraph's reducer channel keeps typ=Annotated[...], so "
    "convert._channel's _zero(c.typ) gives no initial value and the first write is "
    "stored without the reducer: add_messages never coerces the input "
    "(('user', '...') stays a tuple, {'role': ...} a dict)"
)

ASYNC_NODE = (
    "bridge: a node with both a sync and an async body (create_react_agent's "
    "agent node) runs its sync body under ainvoke, so an async-only prompt raises "
    "'No synchronous function provided'"
)

SEND_BRANCH = (
    "graphrun: the conditional edge after a Send task sees only that task's writes "
    "(runner.node_writes gets state={} for a PUSH task), not the state plus its writes "
    "as in LangGraph, so route_tool_responses misses the AIMessage and routes the "
    "normal tool's task back to the agent"
)

SNAPSHOT_INTERRUPT = (
    "get_state().tasks[i].interrupts holds graphrun's Interrupt, which never equals "
    "LangGraph's Interrupt (routing's _as_langgraph does not convert inside the "
    "StateSnapshot/PregelTask namedtuples)"
)

NESTED_CALL = (
    "a compiled graph streamed inside a node with the node's config is refused: "
    "InvalidUpdateError 'cannot run from a subgraph's own checkpoint'"
)

INTERRUPT_VALUES = (
    "when one Send task of a step interrupts, LangGraph still streams a 'values' "
    "chunk with the step's finished tasks' writes; graphrun streams none"
)
