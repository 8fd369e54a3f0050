"""What arrives (updates, signals, node results): decoded once, into the graph's
declared types only, within its limits."""

from __future__ import annotations

from typing import Any

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from graphrun import registry, serde
    from graphrun.spec import GraphSpec


def loads_declared(data: Any, spec: GraphSpec, decode: Any = serde.loads) -> Any:
    """Decode into the graph's declared classes only: data never picks what is built.

    LangChain's message classes are imported on first use from the host, not the sandbox.
    """
    with workflow.unsafe.imports_passed_through():
        return decode(data, spec.types)


class Inputs:
    def __init__(self, graph: str, spec: GraphSpec) -> None:
        self._graph = graph
        self._spec = spec
        # update id -> its argument, decoded once by the validator for the handler
        self._decoded: dict[str, Any] = {}

    def loads(self, data: Any, decode: Any = serde.loads) -> Any:
        return loads_declared(data, self._spec, decode)

    def decode(self, data: Any, what: str) -> Any:
        registry.limits(self._graph).check(data, what)
        return self.loads(data)

    def keep(self, decoded: Any) -> None:
        """A validator's decoding, kept for its handler (see take)."""
        self._decoded[workflow.current_update_info().id] = decoded  # type: ignore[union-attr]

    def take(self, data: Any, what: str) -> Any:
        """The validator's decoding of this update (on replay validators don't run)."""
        update_id = workflow.current_update_info().id  # type: ignore[union-attr]
        if update_id in self._decoded:
            return self._decoded.pop(update_id)
        return self.decode(data, what)
