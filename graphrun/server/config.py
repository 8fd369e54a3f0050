"""LangGraph CLI's `langgraph.json`: `{"graphs": {"<graph id>": "./file.py:attr" |
"module:attr"}, "env": ".env" | {...}}`, paths relative to the file. A graph may be a
function that makes it (graphrun.factory)."""

from __future__ import annotations

import importlib
import importlib.util
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

_log = logging.getLogger(__name__)


class ConfigError(ValueError):
    """A langgraph.json that cannot be read, or names a graph that cannot be loaded."""


def load_config(path: str | Path, *, store: Any = None) -> dict[str, Any]:
    """The graphs a langgraph.json names, by graph id (LangGraph objects converted, a
    factory as a `GraphFactory`). A graph that cannot be loaded or built is an `Unserved`
    naming why, logged here: every other graph is served (`served()` drops it). `store`:
    the store a factory's ServerRuntime carries."""
    from graphrun.factory import GraphFactory, is_factory
    from graphrun.worker import as_graphrun

    file = Path(path)
    try:
        config = json.loads(file.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{file}: cannot read it as JSON: {exc}") from None
    if not isinstance(config, dict) or not isinstance(config.get("graphs"), dict):
        raise ConfigError(f'{file}: expected {{"graphs": {{"<graph id>": "./file.py:attr"}}}}.')
    _load_env(file.parent, config.get("env"))
    graphs: dict[str, Any] = {}
    for graph_id, ref in config["graphs"].items():
        try:
            obj = _load(file.parent, graph_id, ref)
            if is_factory(obj):
                obj = GraphFactory(graph_id, obj, store=store)
            graph = as_graphrun(obj, graph_id) if not hasattr(obj, "spec") else obj
            if not hasattr(graph, "spec"):
                raise ConfigError(f"graph {graph_id!r}: {ref!r} is a {type(graph).__name__}, "
                                  f"not a graph or a function that makes one.")
        except Exception as exc:
            reason = str(exc) if isinstance(exc, ConfigError) else \
                f"graph {graph_id!r} ({ref!r}) failed to load: {type(exc).__name__}: {exc}"
            _log.error("%s: %s; the other graphs are served", file, reason,
                       exc_info=not isinstance(exc, ConfigError))
            graph = Unserved(graph_id, reason)
        graphs[graph_id] = graph
    return graphs


class Unserved:
    """A graph of langgraph.json that could not be loaded or built: its routes answer
    424 with `reason`, and no worker registers it."""

    def __init__(self, graph_id: str, reason: str) -> None:
        self.graph_id, self.reason = graph_id, reason

    def __repr__(self) -> str:
        return f"Unserved({self.graph_id!r}: {self.reason})"


def served(graphs: dict[str, Any]) -> dict[str, Any]:
    """The graphs that loaded (what a worker registers)."""
    return {k: g for k, g in graphs.items() if not isinstance(g, Unserved)}


def thread_ttl(path: str | Path) -> tuple[Any, bool]:
    """langgraph.json's `checkpointer.ttl`: the TTL of the threads the API creates
    (`default_ttl` minutes, `strategy` "delete") and whether a read refreshes it
    (`refresh_on_read`, default true). `sweep_interval_minutes` has no use here: each
    thread's own durable timer deletes it on time, so it is named in a warning."""
    import warnings

    from graphrun.lifetime import ThreadTTL

    file = Path(path)
    try:
        config = json.loads(file.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{file}: cannot read it as JSON: {exc}") from None
    ttl = ((config.get("checkpointer") or {}).get("ttl") or {}) if isinstance(config, dict) \
        else {}
    if not isinstance(ttl, dict):
        raise ConfigError(f"{file}: checkpointer.ttl must be an object")
    if "sweep_interval_minutes" in ttl:
        warnings.warn(f"{file}: checkpointer.ttl.sweep_interval_minutes is not used: each "
                      f"thread's TTL is a durable timer of its own", stacklevel=2)
    default = ttl.get("default_ttl")
    try:
        chosen = None if default is None else ThreadTTL(
            strategy=ttl.get("strategy", "delete"), ttl=default)
    except ValueError as exc:
        raise ConfigError(f"{file}: checkpointer.ttl: {exc}") from None
    return chosen, bool(ttl.get("refresh_on_read", True))


def _load(base: Path, graph_id: str, ref: Any) -> Any:
    target = ref.get("path") if isinstance(ref, dict) else ref
    if not isinstance(target, str) or ":" not in target:
        raise ConfigError(f"graph {graph_id!r}: expected './file.py:attr' or 'module:attr', "
                          f"got {ref!r}.")
    where, attr = target.rsplit(":", 1)
    if where.endswith(".py") or "/" in where:
        file = (base / where).resolve()
        spec = importlib.util.spec_from_file_location(f"langgraph_json_{graph_id}", file)
        if spec is None or spec.loader is None or not file.exists():
            raise ConfigError(f"graph {graph_id!r}: no Python file {file}.")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        if str(file.parent) not in sys.path:
            sys.path.insert(0, str(file.parent))
        spec.loader.exec_module(module)
    else:
        if str(base) not in sys.path:
            sys.path.insert(0, str(base))
        module = importlib.import_module(where)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise ConfigError(f"graph {graph_id!r}: {where} has no attribute {attr!r}.")
        obj = getattr(obj, part)
    return obj


def _load_env(base: Path, env: Any) -> None:
    if isinstance(env, dict):
        for k, v in env.items():
            os.environ.setdefault(str(k), str(v))
    elif isinstance(env, str):
        file = base / env
        if not file.exists():
            return
        for line in file.read_text().splitlines():
            line = line.strip()
            if line and not line.startswith("#") and "=" in line:
                k, _, v = line.partition("=")
                os.environ.setdefault(k.strip(), v.strip().strip('"').strip("'"))
