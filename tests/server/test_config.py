"""langgraph.json graph references: graphs, LangGraph objects and graph factories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from graphrun.server.config import ConfigError, load_config

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
'''


def _config(tmp_path: Path, graphs: dict[str, str]) -> Path:
    (tmp_path / "factories.py").write_text(FACTORIES)
    file = tmp_path / "langgraph.json"
    file.write_text(json.dumps({"graphs": graphs}))
    return file


@pytest.mark.parametrize("name", ["plain", "no_args", "coro", "managed", "sync_managed"])
def test_a_graph_factory_is_called_once_for_the_graph(tmp_path: Path, name: str) -> None:
    graphs = load_config(_config(tmp_path, {"g": f"./factories.py:{name}"}))
    assert name in graphs["g"].spec.nodes
    assert graphs["g"].invoke({"x": 1}) == {"x": 2}


def test_a_factory_that_makes_nothing_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="returned nothing"):
        load_config(_config(tmp_path, {"g": "./factories.py:nothing"}))
