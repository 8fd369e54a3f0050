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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphrun import loader

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


# langgraph.json's keys: served here, read at build time only (the image's), and the rest.
SERVED_KEYS = frozenset({"graphs", "env", "http", "checkpointer", "auth", "store",
                         "webhooks"})
BUILD_KEYS = frozenset({"python_version", "node_version", "dependencies", "dockerfile_lines",
                        "base_image", "image_distro", "pip_config_file", "pip_installer",
                        "keep_pkg_tools", "api_version", "source", "_INTERNAL_docker_tag"})
# Keys of a served section that graphrun does not act on, and why.
UNUSED = {
    "checkpointer.path": "threads live in Temporal workflows, not a checkpointer",
    "checkpointer.serde": "graphrun's own serializer and payload codec keep thread data",
    "checkpointer.ttl.sweep_limit": "each thread's TTL is a durable timer of its own",
    "store.index": "only the in-memory store `graphrun dev` builds without --store is "
                   "indexed from it: a store given with --store keeps the index it was "
                   "built with, and `graphrun serve` serves no store without --store",
    "store.ttl": "only the in-memory store `graphrun dev` builds without --store keeps "
                 "TTLs from it: a store given with --store keeps its own, and `graphrun "
                 "serve` serves no store without --store",
    "store.path": "give the store with --store module:attr",
    "http.mount_prefix": "graphrun serves at the root",
    "http.logging_headers": "graphrun logs no request headers",
    "http.middleware_order": "the user's middleware runs outside graphrun's",
}


def unused_keys(path: str | Path, *, store_built: bool = False) -> list[str]:
    """Warnings for what langgraph.json holds that graphrun does not act on: each key
    named with why (build-time keys are read by the image build, not here).
    `store_built`: the store served is the one `store_from_config` built from the file
    (`graphrun dev` without --store), so its `store.index` and `store.ttl` are used."""
    config = _read(Path(path))
    used = {"store.index", "store.ttl"} if store_built else set()
    out = [f"{k}: {why}" for k, why in UNUSED.items() if _has(config, k) and k not in used]
    store = config.get("store")
    if isinstance(store, dict):
        out += [f"store.{k}: not a key graphrun knows" for k in sorted(store)
                if k not in STORE_KEYS and f"store.{k}" not in UNUSED]
        if store_built:
            out += [f"store.{section}.{k}: not a key graphrun knows"
                    for section, keys in STORE_KEYS.items()
                    if isinstance(store.get(section), dict)
                    for k in sorted(store[section]) if k not in keys]
    out += [f"{k}: not a langgraph.json key graphrun knows" for k in sorted(config)
            if k not in SERVED_KEYS | BUILD_KEYS]
    from graphrun.server.http import KEYS
    http = config.get("http") or {}
    out += [f"http.{k}: not a key graphrun knows" for k in sorted(http)
            if k not in KEYS and f"http.{k}" not in UNUSED]
    return out


def http_options(path: str | Path) -> Any:
    """langgraph.json's `http`, as `build_app(http=...)` takes it (its `app` loaded)."""
    from graphrun.server.http import HttpOptions, options

    file = Path(path)
    http = _read(file).get("http")
    if http is None:
        return HttpOptions()
    if not isinstance(http, dict):
        raise ConfigError(f"{file}: http must be an object")
    try:
        return options(http, lambda ref: _load(file.parent, "http_app", ref, "http.app"))
    except ValueError as exc:
        raise ConfigError(f"{file}: {exc}") from None


def webhook_policy(path: str | Path) -> Any:
    """langgraph.json's `webhooks`, as `build_app(webhooks=...)` takes it."""
    from graphrun.server.webhooks import WebhookPolicy

    file = Path(path)
    try:
        return WebhookPolicy.from_config(_read(file).get("webhooks"))
    except ValueError as exc:
        raise ConfigError(f"{file}: {exc}") from None


def _read(file: Path) -> dict[str, Any]:
    try:
        config = json.loads(file.read_text())
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{file}: cannot read it as JSON: {exc}") from None
    if not isinstance(config, dict):
        raise ConfigError(f"{file}: expected a JSON object")
    return config


def _has(config: dict[str, Any], dotted: str) -> bool:
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return False
        node = node[part]
    return True


def _load(base: Path, graph_id: str, ref: Any, what: str | None = None) -> Any:
    """The object `ref` ("./file.py:attr" or "module:attr", relative to `base`) names."""
    what = what or f"graph {graph_id!r}"
    target = ref.get("path") if isinstance(ref, dict) else ref
    if not isinstance(target, str) or ":" not in target:
        raise ConfigError(f"{what}: expected './file.py:attr' or 'module:attr', got {ref!r}.")
    try:
        return loader.load(target, base=base, module_name=f"langgraph_json_{graph_id}")
    except loader.RefError as exc:
        raise ConfigError(f"{what}: {exc}") from None


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


def auth_options(path: str | Path) -> Any:
    """langgraph.json's `auth` (`{"path": "./auth.py:auth", "disable_studio_auth": ...,
    "openapi": {...}}`, the path relative to the file), as `build_app(auth=...)` takes
    it; None without one. Its `env` is loaded first (the auth module may read it)."""
    from graphrun.server.auth import AuthOptions

    file = Path(path)
    config = _read(file)
    auth = config.get("auth")
    if auth is None:
        return None
    if isinstance(auth, str):
        auth = {"path": auth}
    if not isinstance(auth, dict) or not isinstance(auth.get("path"), str):
        raise ConfigError(f"{file}: auth must be an object with a path "
                          f"('./auth.py:auth'), got {auth!r:.120}")
    _load_env(file.parent, config.get("env"))
    obj = _load(file.parent, "auth", auth["path"], "auth.path")
    try:
        from langgraph_sdk import Auth
    except ImportError:
        raise ConfigError(f"{file}: auth needs langgraph-sdk (pip install langgraph-sdk)"
                          ) from None
    if not isinstance(obj, Auth):
        raise ConfigError(f"{file}: auth.path {auth['path']!r} is a {type(obj).__name__}, "
                          f"not a langgraph_sdk.Auth")
    extra = {k: v for k, v in auth.items() if k not in ("path", "disable_studio_auth",
                                                        "openapi")}
    return AuthOptions(obj, disable_studio_auth=bool(auth.get("disable_studio_auth")),
                       openapi=auth.get("openapi"), extra=extra)


# langgraph.json's `store` sections graphrun builds its in-memory store from, and their keys.
STORE_KEYS = {"index": ("embed", "dims", "fields"),
              "ttl": ("refresh_on_read", "default_ttl", "sweep_interval_minutes")}


def store_from_config(path: str | Path | None = None, *,
                      clock: Callable[[], float] | None = None) -> Any:
    """The in-memory store `graphrun dev` serves and gives the graphs' nodes (without
    --store), as langgraph.json's `store` describes it: LangGraph's `InMemoryStore` with
    `store.index` (`{"embed": "provider:model" | "./file.py:attr" | "module:attr",
    "dims": N, "fields": [...]}`: semantic search) and the TTLs of `store.ttl`
    (`refresh_on_read`, `default_ttl` minutes, `sweep_interval_minutes`), as a
    graphrun.server.memory.TTLInMemoryStore. Without a file or a `store` section, a plain
    one (and None without LangGraph installed). `clock`: the store's, for tests."""
    store = {} if path is None else (_read(Path(path)).get("store") or {})
    file = Path(path) if path is not None else Path("langgraph.json")
    if not isinstance(store, dict):
        raise ConfigError(f"{file}: store must be an object, got {store!r:.120}")
    try:
        from graphrun.server.memory import TTLInMemoryStore
    except ImportError as exc:
        if store.get("index") or store.get("ttl"):
            raise ConfigError(f"{file}: store.index and store.ttl need LangGraph's store "
                              f"(pip install langgraph): {exc}") from None
        return None
    if path is not None:
        _load_env(file.parent, _read(file).get("env"))  # a provider's API key, say
    index = _store_index(file, store.get("index"))
    ttl = _store_ttl(file, store.get("ttl"))
    return TTLInMemoryStore(index=index, ttl=ttl,
                            **({} if clock is None else {"clock": clock}))


def _store_index(file: Path, index: Any) -> dict[str, Any] | None:
    if index is None:
        return None
    if not isinstance(index, dict):
        raise ConfigError(f"{file}: store.index must be an object "
                          f'({{"embed": ..., "dims": N, "fields": [...]}}), got {index!r:.120}')
    dims = index.get("dims")
    if dims is None:
        raise ConfigError(f"{file}: store.index.dims is missing: the length of the vectors "
                          f"store.index.embed makes")
    if isinstance(dims, bool) or not isinstance(dims, int) or dims < 1:
        raise ConfigError(f"{file}: store.index.dims must be a positive integer, "
                          f"got {dims!r:.80}")
    fields = index.get("fields")
    if fields is not None and (not isinstance(fields, list) or not all(
            isinstance(f, str) and f for f in fields)):
        raise ConfigError(f"{file}: store.index.fields must be a list of field paths "
                          f'(e.g. ["text", "memories[*].content"]), got {fields!r:.120}')
    if "embed" not in index:
        raise ConfigError(f"{file}: store.index.embed is missing: 'provider:model' (e.g. "
                          f"'openai:text-embedding-3-small') or './file.py:attr'")
    out: dict[str, Any] = {"dims": dims, "embed": _embeddings(file, index["embed"])}
    if fields is not None:
        out["fields"] = fields
    return out


def _embeddings(file: Path, embed: Any) -> Any:
    """store.index.embed: LangChain's `init_embeddings("provider:model")`, or the
    embeddings object or (async) function of texts a "./file.py:attr" or "module:attr"
    names, as LangChain `Embeddings`."""
    from langchain_core.embeddings import Embeddings
    from langgraph.store.base import ensure_embeddings

    what = "store.index.embed"
    if not isinstance(embed, str) or ":" not in embed.strip(":"):
        raise ConfigError(f"{file}: {what} must be 'provider:model' or './file.py:attr', "
                          f"got {embed!r:.120}")
    where, _, name = embed.rpartition(":")
    from graphrun import _lc_private

    providers = _lc_private.embedding_providers()
    if where in providers and not where.endswith(".py") and "/" not in where:
        try:
            from langchain.embeddings import init_embeddings

            return init_embeddings(embed)
        except Exception as exc:  # the provider's package missing, or its key
            raise ConfigError(f"{file}: {what} {embed!r}: LangChain's init_embeddings "
                              f"failed: {type(exc).__name__}: {exc}") from None
    is_path = where.endswith(".py") or "/" in where
    if not is_path:
        if str(file.parent) not in sys.path:  # as _load imports it
            sys.path.insert(0, str(file.parent))
        try:
            found = importlib.util.find_spec(where) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            known = ", ".join(sorted(providers)) or "none: pip install langchain"
            raise ConfigError(f"{file}: {what} {embed!r}: {where!r} is not an embeddings "
                              f"provider LangChain's init_embeddings knows ({known}) nor "
                              f"a module; a function in a file is './file.py:{name}'")
    try:
        obj = _load(file.parent, "store_index_embed", embed, what)
    except ConfigError as exc:
        raise ConfigError(f"{file}: {exc}") from None
    except Exception as exc:
        raise ConfigError(f"{file}: {what} {embed!r} failed to load: "
                          f"{type(exc).__name__}: {exc}") from None
    if isinstance(obj, Embeddings):
        return obj
    if not callable(obj):
        raise ConfigError(f"{file}: {what} {embed!r} is a {type(obj).__name__}, not "
                          f"embeddings or a function embedding a list of texts")
    return ensure_embeddings(obj)


def _store_ttl(file: Path, ttl: Any) -> dict[str, Any] | None:
    if ttl is None:
        return None
    if not isinstance(ttl, dict):
        raise ConfigError(f"{file}: store.ttl must be an object ({{\"refresh_on_read\": "
                          f"true, \"default_ttl\": minutes, \"sweep_interval_minutes\": N}}),"
                          f" got {ttl!r:.120}")
    refresh = ttl.get("refresh_on_read", True)
    if not isinstance(refresh, bool):
        raise ConfigError(f"{file}: store.ttl.refresh_on_read must be true or false, "
                          f"got {refresh!r:.80}")
    out: dict[str, Any] = {"refresh_on_read": refresh}
    for key in ("default_ttl", "sweep_interval_minutes"):
        value = ttl.get(key)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ConfigError(f"{file}: store.ttl.{key} must be a positive number of "
                              f"minutes, got {value!r:.80}")
        out[key] = value
    return out
