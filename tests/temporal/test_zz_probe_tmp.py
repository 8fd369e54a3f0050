import asyncio
from tests.temporal.test_threads import _serve, _ask_graph, _tid, _cfg, _poll
from graphrun import Command

async def test_probe(temporal_client, graph_worker):
    graph, _ = _serve(temporal_client, graph_worker, _ask_graph())
    tid = _tid(); cfg = _cfg(tid)
    await graph.ainvoke({"topic": "z"}, cfg)
    h = graph.gc.client.get_workflow_handle(tid)
    await h.signal("resume", {"resume": {"__gr": "model", "cls": "nope.mod:X", "v": {}}})
    raw = await _poll(lambda: h.query("get_state"), lambda r: len(r["refused"]) >= 1, timeout=3)
    print("REFUSED", raw["refused"], raw["status"])
    out = await asyncio.wait_for(graph.ainvoke(Command(resume="fine"), cfg), 10)
    print("OUT", out)
