"""Every langchain-core, langsmith and langchain name graphrun reads that they do not
promise to keep.

They were read from langchain-core 1.4 to 1.8 and langsmith 0.3 to 0.15, and are
checked here, once, at import: a version outside the supported range fails with the
range in the message instead of misbehaving later. Without langchain-core this module
is not importable (ModuleNotFoundError): graphrun's core runs without it, and the
modules that need it catch exactly that. Public names (`langchain_core.callbacks`,
`langchain_core.messages`, ...) are imported where they are used.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import Any

# Keep in step with pyproject's extras (messages, langgraph, server, tracing).
LANGCHAIN_CORE = (1, 4), (1, 9)  # >=1.4,<1.9
LANGSMITH = (0, 3), (1, 0)  # >=0.3,<1


def _in(installed: str, supported: tuple[tuple[int, int], tuple[int, int]]) -> bool:
    low, high = supported
    major, minor = (int(p) for p in installed.split(".")[:2])
    return low <= (major, minor) < high


def _spell(supported: tuple[tuple[int, int], tuple[int, int]]) -> str:
    (a, b), (c, d) = supported
    return f">={a}.{b},<{c}.{d}"


def check(package: str, supported: tuple[tuple[int, int], tuple[int, int]]) -> str:
    """The installed version of `package`; ImportError naming the supported range when it
    lies outside it (ModuleNotFoundError when it is not installed)."""
    try:
        installed = version(package)
    except PackageNotFoundError:
        raise ModuleNotFoundError(f"No module named {package.replace('-', '_')!r}",
                                  name=package.replace("-", "_")) from None
    if not _in(installed, supported):
        raise ImportError(
            f"graphrun supports {package}{_spell(supported)}; {package} {installed} is "
            f"installed. Install a supported one: pip install '{package}"
            f"{_spell(supported)}'.")
    return installed


CORE_INSTALLED = check("langchain-core", LANGCHAIN_CORE)
LANGSMITH_INSTALLED = check("langsmith", LANGSMITH)  # langchain-core depends on it

# A handler of this kind makes a chat model stream even from `invoke()` (LangGraph's
# messages mode uses it); the V2 kind hears content-block events (`on_stream_event`).
from langchain_core.tracers._streaming import (  # noqa: E402
    _StreamingCallbackHandler as StreamingCallbackHandler,
)
from langchain_core.tracers._streaming import (  # noqa: E402
    _V2StreamingCallbackHandler as V2StreamingCallbackHandler,
)


def astream_events_handler() -> type[Any]:
    """LangChain's astream_events v2 handler class (graphrun.relay builds on it)."""
    from langchain_core.tracers.event_stream import _AstreamEventsCallbackHandler

    return _AstreamEventsCallbackHandler


def message_to_events(message: Any, **kwargs: Any) -> Any:
    """A whole message as the content-block events a streaming model gives
    (langchain-core's compatibility bridge, as `_achat_model_stream_v3` replays it)."""
    from langchain_core.language_models._compat_bridge import message_to_events as convert

    return convert(message, **kwargs)


def set_config_context(config: Any) -> tuple[Any, Any]:
    """Make `config` LangChain's current one and its run LangSmith's parent: (the
    config var's token, LangSmith's previous tracing context or None)."""
    from langchain_core.runnables.config import _set_config_context

    token, previous = _set_config_context(config)
    return token, previous


def restore_tracing_context(previous: Any) -> None:
    """Put back LangSmith's tracing context `set_config_context` replaced."""
    from langsmith.run_helpers import _set_tracing_context

    _set_tracing_context(previous)


def embedding_providers() -> frozenset[str]:
    """The providers `langchain`'s `init_embeddings` knows by name (empty without it, or
    in a langchain that keeps them elsewhere: a name then reads as a module path)."""
    try:
        from langchain.embeddings.base import _BUILTIN_PROVIDERS
    except ImportError:
        return frozenset()
    return frozenset(_BUILTIN_PROVIDERS)


__all__ = [
    "CORE_INSTALLED",
    "LANGCHAIN_CORE",
    "LANGSMITH",
    "LANGSMITH_INSTALLED",
    "StreamingCallbackHandler",
    "V2StreamingCallbackHandler",
    "astream_events_handler",
    "check",
    "embedding_providers",
    "message_to_events",
    "restore_tracing_context",
    "set_config_context",
]
