"""LangGraph CLI's `langgraph.json`: `{"graphs": {"<graph id>": "./file.py:attr" |
"module:attr"}, "env": ".env" | {...}}`, paths relative to the file."""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import inspect
import json
import os
import sys
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A langgraph.json that cannot be read, or names a graph that cannot be loaded."""


def load_config(path: str | Path) -> dict[str, Any]:
    """The graphs a langgraph.json names, by graph id (LangGraph objects converted)."""
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
        obj = _load(file.parent, graph_id, ref)
        if _is_factory(obj):
            obj = _from_factory(graph_id, obj)
        graphs[graph_id] = as_graphrun(obj, graph_id) if not hasattr(obj, "spec") else obj
    return graphs


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


def _is_factory(obj: Any) -> bool:
    """A function that makes the graph (LangGraph's server allows one), not a graph."""
    from graphrun.bridge import is_langgraph

    return (inspect.isfunction(obj) or inspect.ismethod(obj)) and not is_langgraph(obj) \
        and not hasattr(obj, "spec")


def _from_factory(graph_id: str, factory: Any) -> Any:
    """The graph a factory makes, called once when the graphs are loaded with an empty
    config: a workflow needs one fixed shape per graph id, so unlike LangGraph's server
    the factory is not called again for each run. It may take the config or nothing,
    be async, or be a (async) context manager that yields the graph."""
    takes = len(inspect.signature(factory).parameters)
    made = factory({"configurable": {}}) if takes else factory()
    if inspect.isawaitable(made):
        made = _run(_awaited(made))
    if hasattr(made, "__aenter__"):
        made = _run(made.__aenter__())  # kept open for the life of the process
    elif hasattr(made, "__enter__") and not hasattr(made, "invoke"):
        made = made.__enter__()
    if made is None:
        raise ConfigError(f"graph {graph_id!r}: its factory returned nothing.")
    return made


async def _awaited(value: Any) -> Any:
    return await value


def _run(coro: Any) -> Any:
    """Run a factory's coroutine to its end, also when called from inside a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()


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
