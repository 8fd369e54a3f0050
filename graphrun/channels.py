"""Channels: where a step's writes land. Pure; each restores from plain data.

Each channel class is both a spec (built once at compile time) and, through
`restore(saved)`, a live instance for one step. `save()` returns plain data
(or `MISSING`, for "no value"), which is what checkpoints hold.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from graphrun.errors import InvalidUpdateError


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()

# True while a merge is only looked at (a routing function's view, a paused step's state
# with its finished tasks' writes, a query): a reducer must not change the writes then.
# graphrun.messages sets a missing message id in place, as LangGraph's add_messages does,
# only at merges the thread keeps.
VIEWING: contextvars.ContextVar[bool] = contextvars.ContextVar("graphrun_viewing",
                                                               default=False)


@contextlib.contextmanager
def viewing() -> Iterator[None]:
    """Merges made in this block are views (see VIEWING)."""
    token = VIEWING.set(True)
    try:
        yield
    finally:
        VIEWING.reset(token)


class Channel:
    """Base class. Subclasses hold their value in `self.value`."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.value: Any = MISSING

    def restore(self, saved: Any = MISSING) -> Channel:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        new.value = self._initial() if saved is MISSING else self._load(saved)
        return new

    def _initial(self) -> Any:
        return MISSING

    def _load(self, saved: Any) -> Any:
        return saved

    def save(self) -> Any:
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING

    def get(self) -> Any:
        return self.value

    def update(self, values: Sequence[Any], *, step: int = -1,
               nodes: Sequence[str] = ()) -> bool:
        """Apply one step's writes; return True if the channel changed."""
        raise NotImplementedError

    def consume(self) -> bool:
        """Called when a task triggered by this channel runs; True if it changed."""
        return False

    def finish(self) -> bool:
        """Called when the run would otherwise end; True if the channel changed."""
        return False


class LastValue(Channel):
    """Holds the last value written; two writes in one step are an error."""

    def update(self, values: Sequence[Any], *, step: int = -1,
               nodes: Sequence[str] = ()) -> bool:
        if not values:
            return False
        if len(values) > 1:
            who = f" (from {', '.join(repr(n) for n in nodes)})" if nodes else ""
            raise InvalidUpdateError(
                f"At key '{self.key}': Can receive only one value per step. It got "
                f"{len(values)} writes in step {step}{who}. Declare it "
                f"Annotated[<type>, operator.add] (or another reducer) to merge concurrent "
                f"writes.",
                channel=self.key, step=step, nodes=nodes,
            )
        self.value = values[-1]
        return True


class BinaryOperatorAggregate(Channel):
    """Folds every write into the value with a pure `reducer(old, new)`."""

    def __init__(self, key: str, reducer: Callable[[Any, Any], Any],
                 initial: Callable[[], Any] | None = None) -> None:
        super().__init__(key)
        self.reducer = reducer
        self.initial = initial

    def _initial(self) -> Any:
        if self.initial is None:
            return MISSING
        try:
            return self.initial()
        except Exception:  # a type with no zero value, e.g. a custom class
            return MISSING

    def update(self, values: Sequence[Any], *, step: int = -1,
               nodes: Sequence[str] = ()) -> bool:
        if not values:
            return False
        seen_overwrite = False
        for v in values:
            is_overwrite, value = _overwrite(v)
            if is_overwrite:
                if seen_overwrite:
                    raise InvalidUpdateError(
                        f"Can receive only one Overwrite value per super-step. Channel "
                        f"'{self.key}' got two in step {step} (from {list(nodes)}).",
                        channel=self.key, step=step, nodes=nodes)
                self.value, seen_overwrite = value, True
            elif seen_overwrite:  # an Overwrite discards the step's other writes
                continue
            elif self.value is MISSING:
                self.value = v
            else:
                self.value = self.reducer(self.value, v)
        return True


class UntrackedValue(Channel):
    """`Annotated[T, UntrackedValue]`: a value the run's nodes share that no checkpoint
    keeps (a session, a client). It is gone from `get_state()` and after a pause; on
    Temporal it still travels to the node activities, so it must be serializable."""

    def update(self, values: Sequence[Any], *, step: int = -1,
               nodes: Sequence[str] = ()) -> bool:
        if not values:
            return False
        if len(values) > 1:
            raise InvalidUpdateError(
                f"At key '{self.key}': an UntrackedValue can receive only one value per "
                f"step; it got {len(values)} in step {step}.", channel=self.key, step=step,
                nodes=nodes)
        self.value = values[-1]
        return True

    def save(self) -> Any:
        return MISSING

    def _load(self, saved: Any) -> Any:
        return MISSING


class EphemeralValue(Channel):
    """Holds a value for the one step after it was written (edge triggers)."""

    def update(self, values: Sequence[Any], *, step: int = -1,
               nodes: Sequence[str] = ()) -> bool:
        if not values:
            if self.value is MISSING:
                return False
            self.value = MISSING
            return True
        self.value = values[-1]
        return True


class Topic(Channel):
    """Collects every write of a step (the queue of `Send` packets)."""

    def _initial(self) -> Any:
        return []

    def _load(self, saved: Any) -> Any:
        return list(saved)

    def save(self) -> Any:
        return list(self.value) if self.value else MISSING

    def is_available(self) -> bool:
        return bool(self.value)

    def update(self, values: Sequence[Any], *, step: int = -1,
               nodes: Sequence[str] = ()) -> bool:
        changed = bool(self.value)
        self.value = list(values)
        return changed or bool(values)


class NamedBarrierValue(Channel):
    """Available once every named source has written (the `add_edge([a, b], c)` join)."""

    def __init__(self, key: str, names: Sequence[str]) -> None:
        super().__init__(key)
        self.names = frozenset(names)

    def _initial(self) -> Any:
        return set()

    def _load(self, saved: Any) -> Any:
        return set(saved)

    def save(self) -> Any:
        return sorted(self.value) if self.value else MISSING

    def is_available(self) -> bool:
        return bool(self.value == self.names)

    def get(self) -> Any:
        return None

    def update(self, values: Sequence[Any], *, step: int = -1,
               nodes: Sequence[str] = ()) -> bool:
        changed = False
        for v in values:
            if v in self.names and v not in self.value:
                self.value.add(v)
                changed = True
        return changed

    def consume(self) -> bool:
        if self.value == self.names:
            self.value = set()
            return True
        return False


class AfterFinish(Channel):
    """An edge into a `defer=True` node: written like the edge it wraps, available only
    once the run has nothing else to do (LangGraph's *AfterFinish channels). Saved as
    [value, finished]."""

    def __init__(self, key: str, edge: Channel) -> None:
        super().__init__(key)
        self.edge = edge
        self.finished = False

    def restore(self, saved: Any = MISSING) -> Channel:
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        value, finished = saved if saved is not MISSING else (MISSING, False)
        new.edge = self.edge.restore(value)
        new.finished = bool(finished)
        new.value = MISSING
        return new

    def save(self) -> Any:
        value = self.edge.save()
        return MISSING if value is MISSING else [value, self.finished]

    def is_available(self) -> bool:
        return self.finished and self.edge.is_available()

    def get(self) -> Any:
        return self.edge.get()

    def update(self, values: Sequence[Any], *, step: int = -1,
               nodes: Sequence[str] = ()) -> bool:
        if not values:  # it outlives the step, unlike the edge it wraps
            return False
        self.finished = False
        return self.edge.update(values, step=step, nodes=nodes)

    def finish(self) -> bool:
        if not self.finished and self.edge.is_available():
            self.finished = True
            return True
        return False

    def consume(self) -> bool:
        if not self.finished:
            return False
        self.finished = False
        self.edge = self.edge.restore()
        return True


OVERWRITE = "__overwrite__"


@dataclass(frozen=True)
class Overwrite:
    """Write `value` to a reducer channel as-is, bypassing the reducer.

    Writes to the channel from the same step are discarded; two Overwrites of
    one channel in one step are an error. `{"__overwrite__": value}` means the same.
    """

    value: Any


def _overwrite(value: Any) -> tuple[bool, Any]:
    if isinstance(value, Overwrite):
        return True, value.value
    if isinstance(value, dict):
        if len(value) == 1 and OVERWRITE in value:
            return True, value[OVERWRITE]
        if value.get("type") == OVERWRITE and "value" in value:
            return True, value["value"]
    return False, None
