"""A langgraph.json whose graphs are factories, or fail to load, served by the API: a run
gets the graph its factory makes for it (with a ServerRuntime for execution), and a graph
that failed answers 424 saying why while the others serve."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langgraph_sdk import get_client

from graphrun.server.config import load_config
from tests.server.conftest import _ApiHost

GRAPHS = '''
from typing import TYPE_CHECKING
from typing_extensions import TypedDict
from graphrun import START, StateGraph

if TYPE_CHECKING:
    from langgraph_sdk.runtime import ServerRuntime

class S(TypedDict, total=False):
    text: str
    made_for: str
    run_of_factory: str

BUILT = []  # access contexts the factory was called with, in this process

def make(config, runtime: "ServerRuntime"):
    BUILT.append(runtime.access_context)
    run_id = config["configurable"].get("run_id", "")
    context = runtime.execution_runtime.context if runtime.execution_runtime else None
    def echo(state):
        return {"text": state["text"] + " echoed", "made_for": runtime.access_context,
                "run_of_factory": f"{run_id} {context}"}
    return StateGraph(S).add_node("echo", echo).add_edge(START, "echo").compile()

def fails(config):
    raise RuntimeError("MODEL_API_KEY is not set")
'''


@pytest.fixture(scope="module")
def factory_api(dev_server: Any, tmp_path_factory: pytest.TempPathFactory
                ) -> Iterator[str]:
    root = tmp_path_factory.mktemp("factories")
    (root / "made.py").write_text(GRAPHS)
    (root / "broken.py").write_text("import a_module_that_is_not_installed\n")
    (root / "langgraph.json").write_text(json.dumps({"graphs": {
        "made_by_factory": "./made.py:make", "factory_that_fails": "./made.py:fails",
        "import_that_fails": "./broken.py:graph"}}))
    host = _ApiHost(dev_server.address, load_config(root / "langgraph.json"), api_keys=())
    yield host.url
    host.close()


async def test_a_run_executes_the_graph_its_factory_made_for_it(factory_api: str) -> None:
    client = get_client(url=factory_api)
    thread = await client.threads.create()
    out = await client.runs.wait(thread["thread_id"], "made_by_factory",
                                 input={"text": "hi"}, context={"tenant": "acme"})
    assert out["text"] == "hi echoed"
    assert out["made_for"] == "threads.create_run"  # called again, on the worker, to run
    run_id, context = out["run_of_factory"].split(" ", 1)
    assert uuid.UUID(run_id) and context == "{'tenant': 'acme'}"
    # The graph's shape (schemas) comes from the call at load.
    schemas = await client.assistants.get_schemas(
        (await client.assistants.search(graph_id="made_by_factory"))[0]["assistant_id"])
    assert "text" in schemas["input_schema"]["properties"]


@pytest.mark.parametrize(("graph", "why"), [
    ("factory_that_fails", "RuntimeError: MODEL_API_KEY is not set"),
    ("import_that_fails", "No module named 'a_module_that_is_not_installed'"),
])
async def test_a_graph_that_failed_to_load_answers_424_and_the_others_serve(
        factory_api: str, graph: str, why: str) -> None:
    async with httpx.AsyncClient(base_url=factory_api) as http:
        r = await http.post("/runs/wait", json={"assistant_id": graph, "input": {}})
        assert r.status_code == 424, r.text
        assert why in r.json()["detail"] and repr(graph) in r.json()["detail"]
        listed = (await http.post("/assistants/search", json={})).json()
        default = next(a for a in listed if a["graph_id"] == graph)
        schemas = await http.get(f"/assistants/{default['assistant_id']}/schemas")
        assert schemas.status_code == 424 and why in schemas.json()["detail"]
        ok = await http.post("/runs/wait", json={"assistant_id": "made_by_factory",
                                                 "input": {"text": "still"}})
        assert ok.status_code == 200 and ok.json()["text"] == "still echoed"
