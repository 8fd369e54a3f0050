"""Why a ported prebuilt test fails on graphrun: the `reason=` of its strict xfail.

Each one names a difference between running the graph on LangGraph and running it
through `graphrun.bridge.from_langgraph` (via tests/langgraph_bridge/routing.py).
A fix turns the xfail into an XPASS failure: then drop the marker.
"""

INPUT_IDS = (
    "graphrun's add_messages gives a message that has no id a copy with an id; "
    "LangGraph's sets the id on the message object in place, so the test's own "
    "message objects (the input list, a node's update in the 'updates' stream) "
    "keep id=None where upstream expects an id"
)

INTERRUPT_VALUES = (
    "when a step with finished Send tasks interrupts, LangGraph streams the "
    "'__interrupt__' chunk and then a separate 'values' chunk with the finished tasks' "
    "writes; graphrun streams one chunk carrying both the new values and "
    "'__interrupt__', so upstream (which skips '__interrupt__' chunks) misses "
    "['human', 'ai', 'tool']"
)
