"""The in-memory store `graphrun dev` serves: LangGraph's `InMemoryStore` (semantic search
with langgraph.json's `store.index`) that also keeps items' TTLs (`store.ttl`, and the
`ttl` of a put), which LangGraph's own in-memory store does not. A put replaces the
item's vectors (LangGraph's in-memory store keeps those of fields no longer embedded).

An item put with a TTL (minutes, or `store.ttl.default_ttl` when the put names none)
expires that long after it was last written, or read with `refresh_ttl` (by default
`store.ttl.refresh_on_read`, true). An expired item is deleted before any later
operation of the store runs, so no get, search or namespace listing sees it; the sweeper
(`start_ttl_sweeper`, every `sweep_interval_minutes`) deletes expired items in between,
while the store is idle. Needs LangGraph (`langgraph.store`).
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable, Iterable
from typing import Any, cast

from langgraph.store.base import GetOp, Item, Op, PutOp, Result, SearchOp, TTLConfig
from langgraph.store.memory import InMemoryStore

_Key = tuple[tuple[str, ...], str]


class TTLInMemoryStore(InMemoryStore):
    """`InMemoryStore(index=...)` with TTLs. `ttl`: LangGraph's `TTLConfig`
    (`refresh_on_read`, `default_ttl` minutes, `sweep_interval_minutes`); `clock`: the
    seconds TTLs count in (monotonic time)."""

    supports_ttl = True

    def __init__(self, *, index: Any = None, ttl: dict[str, Any] | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(index=index)
        self.ttl_config = cast(TTLConfig, dict(ttl)) if ttl else None  # BaseStore reads it
        self._clock = clock
        self._ttl: dict[_Key, float] = {}  # an item's TTL, minutes
        self._expires: dict[_Key, float] = {}  # when it expires, on the clock
        self._due: list[tuple[float, int, _Key]] = []  # a heap; stale entries skipped
        self._seq = itertools.count()
        self._sweeper: asyncio.Task[None] | None = None

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        self.sweep_ttl()
        self._replace_vectors(ops)
        results = super().batch(ops)
        self._track(ops, results)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        self.sweep_ttl()
        self._replace_vectors(ops)
        results = await super().abatch(ops)
        self._track(ops, results)
        return results

    def expires_in(self, namespace: tuple[str, ...], key: str) -> float | None:
        """Seconds until the item expires (None: it has no TTL)."""
        at = self._expires.get((tuple(namespace), key))
        return None if at is None else at - self._clock()

    def sweep_ttl(self) -> int:
        """Delete the items that have expired; how many there were."""
        now = self._clock()
        deleted = 0
        while self._due and self._due[0][0] <= now:
            at, _, k = heapq.heappop(self._due)
            if self._expires.get(k) != at:  # refreshed, rewritten or deleted since
                continue
            del self._expires[k]
            self._ttl.pop(k, None)
            ns, key = k
            items = self._data.get(ns)
            if items is not None:
                deleted += items.pop(key, None) is not None
                if not items:
                    del self._data[ns]
            vectors = self._vectors.get(ns)
            if vectors is not None:
                vectors.pop(key, None)
                if not vectors:
                    del self._vectors[ns]
        return deleted

    async def start_ttl_sweeper(self, sweep_interval_minutes: float | None = None
                                ) -> asyncio.Task[None]:
        """Sweep expired items every `sweep_interval_minutes` (default: the TTL config's;
        without one the task ends at once: expired items are still deleted before each
        operation)."""
        interval = sweep_interval_minutes or (self.ttl_config or {}).get(
            "sweep_interval_minutes")
        if self._sweeper is not None and not self._sweeper.done():
            return self._sweeper

        async def sweep() -> None:
            while interval:
                await asyncio.sleep(interval * 60)
                self.sweep_ttl()

        self._sweeper = asyncio.ensure_future(sweep())
        return self._sweeper

    async def stop_ttl_sweeper(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
            self._sweeper = None

    def _replace_vectors(self, ops: list[Op]) -> None:
        # A put replaces the item's vectors (InMemoryStore would keep those of fields
        # the new value, or its `index`, no longer embeds).
        for op in ops:
            if isinstance(op, PutOp) and self.index_config:
                vectors = self._vectors.get(op.namespace)
                if vectors is not None:
                    vectors.pop(op.key, None)

    def _track(self, ops: list[Op], results: list[Result]) -> None:
        now = self._clock()
        for op, result in zip(ops, results, strict=True):
            if isinstance(op, PutOp):
                k = (op.namespace, op.key)
                if op.value is None or op.ttl is None:
                    self._ttl.pop(k, None)
                    self._expires.pop(k, None)
                else:
                    self._ttl[k] = float(op.ttl)
                    self._schedule(k, now)
            elif isinstance(op, GetOp) and op.refresh_ttl and result is not None:
                self._refresh((op.namespace, op.key), now)
            elif isinstance(op, SearchOp) and op.refresh_ttl and isinstance(result, list):
                for item in result:
                    if isinstance(item, Item):  # a search answers items
                        self._refresh((tuple(item.namespace), item.key), now)

    def _refresh(self, k: _Key, now: float) -> None:
        if k in self._ttl:
            self._schedule(k, now)

    def _schedule(self, k: _Key, now: float) -> None:
        at = now + self._ttl[k] * 60
        self._expires[k] = at
        heapq.heappush(self._due, (at, next(self._seq), k))
        if len(self._due) > 2 * len(self._expires) + 64:  # drop the stale entries
            self._due = [(a, s, key) for a, s, key in self._due
                         if self._expires.get(key) == a]
            heapq.heapify(self._due)
