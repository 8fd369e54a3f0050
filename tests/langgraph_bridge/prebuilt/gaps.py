"""Why a ported prebuilt test fails on graphrun: the `reason=` of its strict xfail.

Each one names a difference between running the graph on LangGraph and running it
through `graphrun.bridge.from_langgraph` (via tests/langgraph_bridge/routing.py).
A fix turns the xfail into an XPASS failure: then drop the marker.
"""

# None at the moment: every ported prebuilt test passes through the bridge.
