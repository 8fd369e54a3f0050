"""langgraph.json graph references: graphs, LangGraph objects and graph factories; a graph
that fails to load leaves the others served."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrun.factory import FactoryError, GraphFactory
from graphrun.server.config import Unserved, load_config, served

FACTORIES = '''
import contextlib
from typing_extensions import TypedDict
from graphrun import START, StateGraph

class S(TypedDict):
    x: int

def _build(tag):
    return (StateGraph(S).add_node(tag, lambda s: {"x": s["x"] + 1})
            .add_edge(START, tag).compile())

def plain(config):
    assert config == {"configurable": {}}
    return _build("plain")

def with_runtime(config, runtime: "ServerRuntime"):
    assert runtime.access_context == "assistants.read" and runtime.execution_runtime is None
    return _build("with_runtime")

def runtime_first(runtime: "ServerRuntime", config):
    return _build("runtime_first")

def only_runtime(runtime: "ServerRuntime"):
    return _build("only_runtime")

def no_args():
    return _build("no_args")

async def coro(config):
    return _build("coro")

@contextlib.asynccontextmanager
async def managed(config):
    yield _build("managed")

@contextlib.contextmanager
def sync_managed(config):
    yield _build("sync_managed")

def nothing(config):
    return None

def raises(config):
    raise RuntimeError("no API key for the model")

def three(a, b, c):
    return _build("three")
'''


def _config(tmp_path: Path, graphs: dict[str, str]) -> Path:
    (tmp_path / "factories.py").write_text(FACTORIES)
    file = tmp_path / "langgraph.json"
    file.write_text(json.dumps({"graphs": graphs}))
    return file


@pytest.mark.parametrize("name", ["plain", "no_args", "coro", "managed", "sync_managed",
                                  "with_runtime", "runtime_first", "only_runtime"])
def test_a_graph_factory_gives_the_graph_its_shape(tmp_path: Path, name: str) -> None:
    graphs = load_config(_config(tmp_path, {"g": f"./factories.py:{name}"}))
    assert isinstance(graphs["g"], GraphFactory)
    assert name in graphs["g"].spec.nodes
    assert graphs["g"].invoke({"x": 1}) == {"x": 2}


@pytest.mark.parametrize(("name", "why"), [
    ("nothing", "returned nothing"),
    ("raises", "RuntimeError: no API key for the model"),
    ("three", "must take nothing, the config, a ServerRuntime, or both"),
    ("absent", "has no attribute 'absent'"),
])
def test_a_graph_that_fails_to_load_leaves_the_others_served(
        tmp_path: Path, name: str, why: str) -> None:
    graphs = load_config(_config(tmp_path, {"bad": f"./factories.py:{name}",
                                            "good": "./factories.py:plain"}))
    assert isinstance(graphs["bad"], Unserved) and why in graphs["bad"].reason
    assert "'bad'" in graphs["bad"].reason
    assert list(served(graphs)) == ["good"]


def test_a_graph_whose_module_fails_to_import_is_named(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("import not_a_module_anywhere\n")
    graphs = load_config(_config(tmp_path, {"bad": "./broken.py:graph",
                                            "good": "./factories.py:no_args"}))
    assert "ModuleNotFoundError" in graphs["bad"].reason
    assert list(served(graphs)) == ["good"]


async def test_a_run_gets_its_own_graph_from_the_factory(tmp_path: Path) -> None:
    (tmp_path / "per_run.py").write_text(PER_RUN)
    graphs = load_config(_config(tmp_path, {"g": "./per_run.py:make"}))
    factory = graphs["g"]
    assert factory.invoke({"x": 0}) == {"x": 0, "seen": "assistants.read"}
    config = {"configurable": {"run_id": "r1", "who": "ada"}}
    first = await factory.for_run("r1", config, context={"k": 1})
    assert first is await factory.for_run("r1", config)  # one graph per run
    assert first.invoke({"x": 0}) == {"x": 0, "seen": "threads.create_run ada {'k': 1}"}
    other = await factory.for_run("r2", {"configurable": {"who": "bo"}})
    assert other is not first and other.invoke({"x": 0})["seen"].endswith("bo None")
    with pytest.raises(FactoryError, match="one shape of graph"):
        await factory.for_run("r3", {"configurable": {"who": "other-shape"}})


PER_RUN = '''
from typing_extensions import TypedDict
from langgraph_sdk.runtime import ServerRuntime
from graphrun import START, StateGraph

class S(TypedDict, total=False):
    x: int
    seen: str

def make(config, runtime: ServerRuntime):
    who = config["configurable"].get("who", "")
    seen = runtime.access_context
    if runtime.execution_runtime is not None:
        seen += f" {who} {runtime.execution_runtime.context}"
    name = "other" if who == "other-shape" else "echo"
    return (StateGraph(S).add_node(name, lambda s: {"seen": seen})
            .add_edge(START, name).compile())
'''
