"""A compiled graph as a LangChain Runnable, as LangGraph's `Pregel` is.

With langchain-core installed (`graphrun[messages]`), `CompiledStateGraph` (and so an
`@entrypoint`) subclasses LangChain's `Runnable`, so everything a Runnable has works on
it: `batch`/`abatch`, `batch_as_completed`/`abatch_as_completed`, `with_retry`,
`with_fallbacks`, `|` composition (`graph | RunnablePassthrough()`), `astream_log`,
`astream_events(version="v1"|"v2")`, `get_input_schema`/`get_output_schema`, and
`isinstance(graph, Runnable)` in LangChain's own code. `with_config` returns a copy of the
graph (not a `RunnableBinding`) whose config is merged into every call, as LangGraph's
does, so `get_state` and the rest stay on it.

Without langchain-core the class has a plain base with the parts that need no LangChain:
`invoke`/`stream` and their async twins, `batch`/`abatch`, `with_config`, `get_name`.

Also here: the `version="v2"` stream parts (`{"type": mode, "ns": ns, "data": chunk}`,
plus `"interrupts"` for `values`; typed in graphrun.stream_parts) and what
`invoke(..., version="v2")` returns (`graphrun.types.GraphOutput`).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import typing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from graphrun._passthrough import passed_through
from graphrun.engine.events import own_or_sub
from graphrun.types import INTERRUPT, NS_SEP, START, GraphOutput, Interrupt

try:
    # Passed through a workflow sandbox that imports graphrun (a user's workflow module):
    # langchain-core brings langsmith's HTTP client, which the sandbox refuses.
    with passed_through():
        from langchain_core.runnables import Runnable as _Runnable

    HAS_LANGCHAIN = True
except ImportError:  # the plain install
    HAS_LANGCHAIN = False
    _Runnable = None  # type: ignore[assignment,misc]

__all__ = ["HAS_LANGCHAIN", "GraphOutput", "RunnableGraph", "merge_configs"]

# -- configs ------------------------------------------------------------------------------
def merge_configs(*configs: Mapping[str, Any] | None) -> dict[str, Any]:
    """LangChain's `merge_configs` (tags, metadata, configurable and callbacks merged),
    or the same rules on plain dicts without langchain-core."""
    if HAS_LANGCHAIN:
        from langchain_core.runnables.config import merge_configs as lc_merge

        return dict(lc_merge(*configs))  # type: ignore[arg-type]
    out: dict[str, Any] = {}
    for c in configs:
        for k, v in (c or {}).items():
            if k in ("metadata", "configurable"):
                out[k] = {**out.get(k, {}), **(v or {})}
            elif k == "tags":
                out[k] = sorted(set(out.get(k, [])) | set(v or []))
            elif k == "callbacks" and v is not None:
                out[k] = [*out.get(k, []), *v]
            elif v is not None:
                out[k] = v
    return out


# -- the Runnable base ---------------------------------------------------------------------
class _Plain:
    """The Runnable methods that need no LangChain, for the plain install."""

    name: str | None = None

    def get_name(self, suffix: str | None = None, *, name: str | None = None) -> str:
        name_ = name or self.name or type(self).__name__
        return f"{name_}{suffix}" if suffix else name_

    def batch(self, inputs: Sequence[Any], config: Any = None, *,
              return_exceptions: bool = False, **kwargs: Any) -> list[Any]:
        configs = _config_list(config, len(inputs))

        def one(item: tuple[Any, Any]) -> Any:
            try:
                return self.invoke(item[0], item[1], **kwargs)  # type: ignore[attr-defined]
            except Exception as exc:
                if return_exceptions:
                    return exc
                raise

        if len(inputs) <= 1:
            return [one(i) for i in zip(inputs, configs, strict=True)]
        workers = (configs[0] or {}).get("max_concurrency")
        with ThreadPoolExecutor(max_workers=workers) as pool:
            return list(pool.map(one, zip(inputs, configs, strict=True)))

    async def abatch(self, inputs: Sequence[Any], config: Any = None, *,
                     return_exceptions: bool = False, **kwargs: Any) -> list[Any]:
        configs = _config_list(config, len(inputs))
        limit = (configs[0] or {}).get("max_concurrency") if configs else None
        sem = asyncio.Semaphore(limit) if limit else None

        async def one(item: Any, cfg: Any) -> Any:
            try:
                if sem is None:
                    return await self.ainvoke(item, cfg, **kwargs)  # type: ignore[attr-defined]
                async with sem:
                    return await self.ainvoke(item, cfg, **kwargs)  # type: ignore[attr-defined]
            except Exception as exc:
                if return_exceptions:
                    return exc
                raise

        return list(await asyncio.gather(*(one(i, c) for i, c in zip(
            inputs, configs, strict=True))))


def _config_list(config: Any, n: int) -> list[Any]:
    if isinstance(config, Sequence) and not isinstance(config, (str, bytes)):
        if len(config) != n:
            raise ValueError(f"config must be a list of the same length as inputs, but got "
                             f"{len(config)} configs for {n} inputs")
        return list(config)
    return [config] * n


_Base: Any = _Runnable if HAS_LANGCHAIN else _Plain


class RunnableGraph(_Base):  # type: ignore[misc]
    """What makes a compiled graph a Runnable. The graph supplies `spec`, `invoke`,
    `ainvoke`, `stream` and `astream`; `config` is set by `with_config`."""

    config: dict[str, Any] | None = None
    spec: Any

    def with_config(self, config: Mapping[str, Any] | None = None, **kwargs: Any) -> Any:
        """A copy of the graph with `config` merged into every call (LangGraph's)."""
        new = copy.copy(self)
        new.config = merge_configs(self.config, {**(config or {}), **kwargs})
        return new

    def stream_events(self, input: Any, config: Any = None, *, version: str = "v2",
                      transformers: Sequence[Any] | None = None, **kwargs: Any) -> Any:
        """`version="v3"`: LangGraph's `GraphRunStream` of the run (graphrun.run_stream,
        needs `graphrun[langgraph]`); v1/v2: LangChain's."""
        if version == "v3":
            from graphrun.run_stream import stream_v3

            return stream_v3(self, input, config, transformers=transformers, **kwargs)
        if not HAS_LANGCHAIN:
            raise ImportError("stream_events v1/v2 needs langchain-core: "
                              "pip install 'graphrun[messages]'.")
        return super().stream_events(input, config, version=version, **kwargs)

    def astream_events(self, input: Any, config: Any = None, *, version: str = "v2",
                       transformers: Sequence[Any] | None = None, **kwargs: Any) -> Any:
        """`version="v3"`: an awaitable of LangGraph's `AsyncGraphRunStream` of the run
        (graphrun.run_stream); v1/v2: LangChain's event stream."""
        if version == "v3":
            from graphrun.run_stream import astream_v3

            return astream_v3(self, input, config, transformers=transformers, **kwargs)
        if not HAS_LANGCHAIN:
            raise ImportError("astream_events v1/v2 needs langchain-core: "
                              "pip install 'graphrun[messages]'.")
        return super().astream_events(input, config, version=version, **kwargs)

    def merged_config(self, config: Mapping[str, Any] | None) -> Any:
        """`config` over the graph's own (`with_config`), as an invocation sees it."""
        return merge_configs(self.config, config) if self.config else config

    def stream_scope(self, config: Mapping[str, Any] | None) -> tuple[str, ...]:
        """The namespace `stream_events(version="v3")` scopes its projections to: a
        `checkpoint_ns` the config names, as LangGraph scopes a call given one."""
        configurable = (self.merged_config(config) or {}).get("configurable") or {}
        ns = configurable.get("checkpoint_ns")
        return tuple(ns.split(NS_SEP)) if ns else ()

    @property
    def InputType(self) -> Any:
        return self.spec.input_type if self.spec is not None else Any

    @property
    def OutputType(self) -> Any:
        return self.spec.output_type if self.spec is not None else Any

    def get_input_schema(self, config: Any = None) -> Any:
        """A pydantic model of the input, as LangGraph's: the input schema itself (a
        pydantic one), else a root model of it named `<name>Input`."""
        annotation = self.InputType
        if isinstance(annotation, type) and hasattr(annotation, "model_json_schema"):
            return annotation
        try:
            if HAS_LANGCHAIN:
                return super().get_input_schema(config)
            from pydantic import RootModel

            model = RootModel[annotation]  # type: ignore[valid-type]
            model.model_json_schema()  # a typing.TypedDict before 3.12 fails here
            return model
        except Exception:  # as a model of its keys, each optional
            return self._keys_model(annotation, "Input")

    def get_output_schema(self, config: Any = None) -> Any:
        """A pydantic model of the output, as LangGraph's: `<name>Output`, each key
        optional (a one-value state's: a root model)."""
        if self.spec is None or self.spec.is_root or _keys(self.OutputType) is None:
            if HAS_LANGCHAIN:
                return super().get_output_schema(config)
            from pydantic import RootModel

            return RootModel[self.OutputType]  # type: ignore[name-defined]
        return self._keys_model(self.OutputType, "Output")

    def _keys_model(self, annotation: Any, suffix: str) -> Any:
        from pydantic import ConfigDict, create_model

        return create_model(  # type: ignore[call-overload]
            self.get_name(suffix), __config__=ConfigDict(arbitrary_types_allowed=True),
            **{k: (t, None) for k, t in (_keys(annotation) or {}).items()})


def _keys(annotation: Any) -> dict[str, Any] | None:
    """A state schema's keys and types, reducers left out; None for another type."""
    if not isinstance(annotation, type):
        return None
    try:
        hints = typing.get_type_hints(annotation)
    except Exception:
        return None
    if dataclasses.is_dataclass(annotation) or hasattr(annotation, "model_fields") or (
            hasattr(annotation, "__total__")):  # a TypedDict (typing's or typing_extensions')
        return hints
    return None


# -- version="v2" ------------------------------------------------------------------------
def output_mapper(spec: Any) -> Callable[[Any], Any] | None:
    """What makes a 'values' chunk the output schema's class (pydantic or dataclass), as
    LangGraph's v2 does; None for a TypedDict or a one-value state."""
    return None if spec is None or spec.is_root else _mapper(spec.output_type)


def state_mapper(spec: Any) -> Callable[[Any], Any] | None:
    return None if spec is None or spec.is_root else _mapper(spec.builder.state_schema)


def _mapper(schema: Any) -> Callable[[Any], Any] | None:
    if inspect.isclass(schema) and (hasattr(schema, "model_fields")
                                    or dataclasses.is_dataclass(schema)):
        return lambda values: schema(**values)
    return None


def stream_parts(events: Iterable[tuple[Any, ...]], stream_mode: str | Sequence[str],
                 subgraphs: bool, spec: Any, own: tuple[str, ...] = ()
                 ) -> Iterator[dict[str, Any]]:
    """Stream events as LangGraph's v2 `StreamPart`s. `own`: the namespace of the graph's
    own parts (a graph streamed inside a node: its task's, as LangGraph's)."""
    modes = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode)
    out_map, state_map = output_mapper(spec), state_mapper(spec)
    for event in events:
        ns, mode, payload = own_or_sub(event, own)
        mine = ns == own
        if mode not in modes or not (mine or subgraphs):
            continue
        if mode == "values":
            interrupts: tuple[Interrupt, ...] = ()
            if isinstance(payload, dict):
                payload = dict(payload)
                interrupts = tuple(payload.pop(INTERRUPT, ()))
                if out_map is not None and mine:
                    payload = out_map(payload)
            yield {"type": mode, "ns": ns, "data": payload, "interrupts": interrupts}
        elif mode in ("checkpoints", "debug") and state_map is not None and mine:
            yield {"type": mode, "ns": ns, "data": _coerced(payload, state_map)}
        else:
            yield {"type": mode, "ns": ns, "data": payload}


def _coerced(payload: Any, mapper: Callable[[Any], Any]) -> Any:
    """A checkpoint's values (or a debug checkpoint's) as the state schema's class,
    except the first checkpoint (next is __start__), whose channels are not all set."""
    if not isinstance(payload, dict):
        return payload
    inner = payload.get("payload") if payload.get("type") == "checkpoint" else payload
    if (isinstance(inner, dict) and isinstance(inner.get("values"), dict)
            and START not in inner.get("next", ())):
        inner = {**inner, "values": mapper(inner["values"])}
        return {**payload, "payload": inner} if payload.get("type") == "checkpoint" else inner
    return payload


def graph_output(spec: Any, values: Any, interrupts: Sequence[Interrupt]) -> GraphOutput[Any]:
    mapper = output_mapper(spec)
    if mapper is not None and isinstance(values, dict):
        values = mapper(values)
    return GraphOutput(value=values, interrupts=tuple(interrupts))
