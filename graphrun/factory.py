"""Graph factories as LangGraph's server calls them.

A langgraph.json graph may be a function that makes the graph. It may take the run's
config, a `langgraph_sdk.runtime.ServerRuntime`, both (by keyword, in either order) or
nothing; a parameter is the runtime when annotated `ServerRuntime`. It may be async, or a
(async) context manager that yields the graph.

LangGraph's server calls it each time it needs the graph, and says why in
`runtime.access_context`. Here a workflow needs one fixed shape per graph id, which
LangGraph asks of factories too ("in all contexts, the returned graph must have the
same topology"). So the factory is called once at load ("assistants.read") for the
shape: schemas, drawings, state reads and the workflow's plan. It is called again on
the worker for each run ("threads.create_run", with the run's config, user, store and
context), and that run's nodes are the ones that graph holds.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import typing
from collections import OrderedDict
from typing import Any

RUNS_KEPT = 32  # graphs built for runs kept per factory (a run's steps reuse its graph)


class FactoryError(ValueError):
    """A factory whose signature LangGraph's server would not call, or that made no graph
    (or a graph of another shape for a run)."""


class GraphFactory:
    """A graph made by a factory: its shape answers as the graph does (`spec`, schemas,
    `invoke`...), and `for_run` makes the graph a run executes."""

    def __init__(self, graph_id: str, fn: Any, *, store: Any = None) -> None:
        self.graph_id = graph_id
        self.fn = fn
        self._kwargs = _classify(fn)
        self._store = store
        self._runs: OrderedDict[str, tuple[Any, contextlib.AsyncExitStack]] = OrderedDict()
        self.shape = _in_new_loop(self._make("assistants.read", {"configurable": {}},
                                             contextlib.AsyncExitStack()))

    def __getattr__(self, name: str) -> Any:
        if name == "shape":  # not built yet (a failing factory)
            raise AttributeError(name)
        return getattr(self.shape, name)

    async def for_run(self, key: str, config: dict[str, Any], *, context: Any = None,
                      store: Any = None) -> Any:
        """The graph run `key` executes, made once per run (the latest RUNS_KEPT kept;
        a context manager's exit runs when its run is dropped)."""
        if key in self._runs:
            self._runs.move_to_end(key)
            return self._runs[key][0]
        stack = contextlib.AsyncExitStack()
        try:
            graph = await self._make("threads.create_run", config, stack, context=context,
                                     store=store)
            if set(graph.spec.nodes) != set(self.shape.spec.nodes):
                raise FactoryError(
                    f"graph {self.graph_id!r}: its factory made a graph with nodes "
                    f"{sorted(graph.spec.nodes)} for this run, but "
                    f"{sorted(self.shape.spec.nodes)} at load: a factory must make one "
                    f"shape of graph (vary its resources, not its nodes).")
        except BaseException:
            await stack.aclose()
            raise
        if key in self._runs:  # a parallel task of the run made it meanwhile
            await stack.aclose()
            return self._runs[key][0]
        self._runs[key] = (graph, stack)
        while len(self._runs) > RUNS_KEPT:
            _, (_, old) = self._runs.popitem(last=False)
            await old.aclose()
        return graph

    async def _make(self, access_context: str, config: dict[str, Any],
                    stack: contextlib.AsyncExitStack, *, context: Any = None,
                    store: Any = None) -> Any:
        from graphrun.worker import as_graphrun

        runtime = (_runtime(access_context, config, store or self._store, context)
                   if self._kwargs.wants_runtime else None)
        made = self.fn(**self._kwargs(config, runtime))
        if inspect.isawaitable(made):
            made = await made
        if hasattr(made, "__aenter__"):
            made = await stack.enter_async_context(made)
        elif hasattr(made, "__enter__") and not hasattr(made, "invoke"):
            made = stack.enter_context(made)
        if made is None:
            raise FactoryError(f"graph {self.graph_id!r}: its factory returned nothing.")
        if hasattr(made, "compile") and not hasattr(made, "invoke"):
            made = made.compile()  # a builder, as LangGraph's server accepts
        made = as_graphrun(made, self.graph_id)
        if not hasattr(made, "spec"):
            raise FactoryError(f"graph {self.graph_id!r}: its factory made a "
                               f"{type(made).__name__}, not a graph.")
        return made


def is_factory(obj: Any) -> bool:
    """A function that makes the graph, not a graph."""
    from graphrun.bridge import is_langgraph

    return (inspect.isfunction(obj) or inspect.ismethod(obj)) and not is_langgraph(obj) \
        and not hasattr(obj, "spec")


class _Kwargs:
    """How to call a factory: which parameter takes the config, which the runtime."""

    def __init__(self, config: str | None, runtime: str | None) -> None:
        self.config, self.runtime = config, runtime
        self.wants_runtime = runtime is not None

    def __call__(self, config: dict[str, Any], runtime: Any) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.config:
            out[self.config] = config
        if self.runtime:
            out[self.runtime] = runtime
        return out


def _classify(fn: Any) -> _Kwargs:
    params = list(inspect.signature(fn).parameters.values())
    runtime = [p.name for p in params if _is_runtime(_hint(fn, p))]
    if len(params) > 2 or (len(params) == 2 and len(runtime) != 1):
        raise FactoryError(
            f"graph factory {getattr(fn, '__name__', fn)!r} must take nothing, the config, "
            f"a ServerRuntime, or both (the runtime annotated `ServerRuntime`); it takes "
            f"{[p.name for p in params]}.")
    config = [p.name for p in params if p.name not in runtime]
    return _Kwargs(config[0] if config else None, runtime[0] if runtime else None)


def _hint(fn: Any, param: inspect.Parameter) -> Any:
    """The parameter's annotation, resolved (a string one too, as under TYPE_CHECKING)."""
    try:
        from langgraph_sdk.runtime import ServerRuntime
        localns = {"ServerRuntime": ServerRuntime}
    except ImportError:
        localns = {}
    try:
        return typing.get_type_hints(fn, localns=localns).get(param.name, param.annotation)
    except Exception:
        return param.annotation


def _is_runtime(annotation: Any) -> bool:
    if annotation is inspect.Parameter.empty:
        return False
    if isinstance(annotation, str):  # unresolved: judge by its name
        return annotation.split("[")[0].rsplit(".", 1)[-1] == "ServerRuntime"
    try:
        from langgraph_sdk.runtime import ServerRuntime, _ExecutionRuntime, _ReadRuntime
    except ImportError:
        return False
    if annotation is ServerRuntime or typing.get_origin(annotation) is ServerRuntime:
        return True
    if isinstance(annotation, type):
        return issubclass(annotation, (_ExecutionRuntime, _ReadRuntime))
    args = typing.get_args(annotation)  # Annotated[ServerRuntime, ...]
    return bool(args) and _is_runtime(args[0])


def _runtime(access_context: Any, config: dict[str, Any], store: Any, context: Any) -> Any:
    """langgraph_sdk's ServerRuntime for this call: the run's user (the API stamps it into
    the config) and a store (an empty in-memory one when the worker has none: the
    runtime's store is never None on LangGraph's server either)."""
    try:
        from langgraph_sdk.runtime import _ExecutionRuntime, _ReadRuntime
    except ImportError as exc:
        raise FactoryError(f"a graph factory that takes a ServerRuntime needs langgraph-sdk "
                           f"({exc}): pip install langgraph-sdk") from None
    if store is None:
        from langgraph.store.memory import InMemoryStore
        store = InMemoryStore()
    from graphrun.users import user_of

    user = user_of((config.get("configurable") or {}).get("langgraph_auth_user"))
    if access_context == "threads.create_run":
        return _ExecutionRuntime(access_context=access_context, user=user, store=store,
                                 context=context)
    return _ReadRuntime(access_context=access_context, user=user, store=store)


def _in_new_loop(coro: Any) -> Any:
    """Run a coroutine to its end from sync code, also when called inside a loop."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coro).result()
