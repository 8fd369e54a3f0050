"""What Temporal's visibility index knows of a thread, and how it is written.

A thread (and a user assistant) keeps these search attributes current, so that a
search, a count and a sort run in Temporal's visibility store, exact at any count,
instead of over a window of recent executions:

    GraphStatus     Keyword      running | interrupted | done | failed
    GraphName       Keyword      the registered graph name
    GraphCreatedAt  Datetime     when the thread was created (kept across continue-as-new)
    GraphUpdatedAt  Datetime     when the thread last changed (a run, an update, metadata)
    GraphMetadata   KeywordList  one entry per indexed metadata key (see metadata_entries)

They fit SQL visibility's per-type limits for custom search attributes (10 Keyword,
3 Datetime, 3 KeywordList on the dev server's SQLite and on PostgreSQL/MySQL).
Search attributes are not encrypted by a payload codec: an operator who keeps
secrets in thread metadata chooses the keys that are indexed (`index_metadata`).

The workflow imports the first half (what is written) through the sandbox; the second
(`page`, `count`: exact, sorted pages of threads from counts) runs in clients.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from temporalio.common import SearchAttributeKey
from xxhash import xxh3_64_hexdigest

if TYPE_CHECKING:
    from temporalio.client import Client, WorkflowExecution

GRAPH_STATUS = SearchAttributeKey.for_keyword("GraphStatus")
GRAPH_NAME = SearchAttributeKey.for_keyword("GraphName")
CREATED_AT = SearchAttributeKey.for_datetime("GraphCreatedAt")
UPDATED_AT = SearchAttributeKey.for_datetime("GraphUpdatedAt")
METADATA = SearchAttributeKey.for_keyword_list("GraphMetadata")

SEARCH_ATTRIBUTES: dict[str, str] = {
    "GraphStatus": "Keyword",
    "GraphName": "Keyword",
    "GraphCreatedAt": "Datetime",
    "GraphUpdatedAt": "Datetime",
    "GraphMetadata": "KeywordList",
}
"""Name -> kind of every search attribute graphrun writes (`graphrun setup` registers them)."""

# An entry longer than this is kept as a hash: equality still matches, and the list
# stays within the server's size limit for one value (2 KiB).
MAX_PLAIN_ENTRY = 64
MAX_ENTRIES_BYTES = 1_800
# Characters an entry never holds as text: SQL visibility fails a query on a double
# quote (SQLite: "unterminated string") and never matches a backslash; the others
# would make `path:value` ambiguous.
_UNSAFE_VALUE = frozenset('"\\')
_UNSAFE_PATH = frozenset('"\\:=#')


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


def entry(path: str, value: Any) -> str:
    """The index entry of `path` (a top-level key, or `key.sub` for a nested one) equal
    to `value`, readable in the Web UI where it can be: `path:text` for a string,
    `path=<JSON>` for a number, a boolean or null; `path#<hash>` for the rest (lists,
    objects, long values, quotes), and `#<hash>` for a path with `:`, `=` or `#` in it.
    Two entries are equal exactly when path and value are (up to a hash collision)."""
    text = _canonical(value)
    if _UNSAFE_PATH & set(path):
        return "#" + xxh3_64_hexdigest(f"{path}\x00{text}".encode())
    plain = f"{path}:{value}" if isinstance(value, str) else f"{path}={text}"
    if len(plain) <= MAX_PLAIN_ENTRY and not _UNSAFE_VALUE & set(plain):
        return plain
    return f"{path}#{xxh3_64_hexdigest(text.encode())}"


def _leaves(prefix: str, value: Any) -> list[str]:
    """Entries for a value: the value itself, and each leaf of a dict by its dotted path,
    so a filter on a nested key ({"a": {"b": 1}}) matches by containment."""
    out = [entry(prefix, value)]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _leaves(f"{prefix}.{k}", v)
    return out


def metadata_entries(metadata: Mapping[str, Any] | None,
                     keys: Sequence[str] | None = None) -> list[str]:
    """The GraphMetadata entries of a thread's metadata: every key, or only `keys`
    (an operator's choice: `None` indexes all). Entries past the size budget are left
    out (such keys cannot be searched on that thread)."""
    out: list[str] = []
    size = 2
    for k, v in (metadata or {}).items():
        if keys is not None and k not in keys:
            continue
        for e in _leaves(str(k), v):
            size += len(e.encode()) + 3
            if size > MAX_ENTRIES_BYTES:
                return out
            out.append(e)
    return out


def filter_entries(metadata: Mapping[str, Any]) -> list[str]:
    """The entries a metadata filter requires (JSON containment, by key): a dict value
    by each of its leaves, any other value as a whole (a list matches an equal list)."""
    out: list[str] = []

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for k, v in value.items():
                walk(f"{prefix}.{k}", v)
        else:
            out.append(entry(prefix, value))

    for k, v in metadata.items():
        walk(str(k), v)
    return out


# -- searching: exact, sorted pages from counts -----------------------------------------
# SQL visibility (the dev server's SQLite, PostgreSQL, MySQL) has no ORDER BY, so a page
# is found from counts. How many rows come before a cut on the sort key is monotone in
# the cut: a search moves two cuts toward the page's first and last positions (galloping
# out from what it knows, then interpolating, halving when that stalls) until few rows
# lie between them, lists those and sorts them here. More rows on one key value than a
# window holds are ordered by the next key (ties by workflow id, character by character).
# Round trips grow with the log of the key's range, not with the number of threads, and
# a count over a narrow range reads an index range: a page near either end stays quick
# at any count. Elasticsearch (Temporal Cloud) takes the same queries.

THREADS = "WorkflowType IN ('GraphWorkflow', 'ThreadRecord') AND ExecutionStatus = 'Running'"
"""Every thread, once: its open workflow (closed runs are earlier runs, or threads from
before threads stayed open, which `graphrun migrate` reopens)."""

SortBy = Literal["created_at", "updated_at", "state_updated_at", "thread_id", "status"]
STATUS_ORDER = ("running", "failed", "done", "interrupted")
"""GraphStatus in the order of the API's names (busy, error, idle, interrupted)."""

SLACK = 16  # rows a cut may miss the page's edge by: a count costs about 15 listed rows
SAMPLE = 32  # rows listed first: often the page itself (newest first, started in order)


def quote(value: str) -> str:
    """A string literal of Temporal's list filter."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def where(*, status: str | None = None, graph: str | None = None,
          metadata: Mapping[str, Any] | None = None, ids: Sequence[str] | None = None,
          base: str = THREADS) -> str:
    """The visibility query of the threads that match: GraphStatus, GraphName, every
    GraphMetadata entry of a metadata filter (KeywordList `=` is "contains"), and
    workflow ids."""
    clauses = [base]
    if status is not None:
        clauses.append(f"GraphStatus = {quote(status)}")
    if graph is not None:
        clauses.append(f"GraphName = {quote(graph)}")
    clauses += [f"GraphMetadata = {quote(e)}" for e in filter_entries(metadata or {})]
    if ids is not None:
        clauses.append(f"WorkflowId IN ({', '.join(quote(i) for i in ids) or quote('')})")
    return " AND ".join(clauses)


async def count(client: Client, query: str) -> int:
    """How many executions match, exact at any count."""
    return (await client.count_workflows(query)).count


async def page(client: Client, query: str, sort_by: SortBy, order: Literal["asc", "desc"],
               offset: int, limit: int) -> list[WorkflowExecution]:
    """The executions at [offset, offset + limit) of those `query` matches, sorted by
    `sort_by` (ties by workflow id; rows without the key last), exact at any depth."""
    if limit <= 0:
        return []
    search = _Search(client, order == "asc")
    level = _LEVELS[sort_by]()
    # The first rows listed are the most recently started: with threads started in order
    # they are the newest first page itself, which one count then confirms.
    size = min(1000, max(SAMPLE, offset + limit + SLACK)) if offset <= SLACK else SAMPLE
    sample = await search.fetch(query, size)
    if len(sample) < size:  # that was every row
        return search.sort(level, sample)[offset:offset + limit]
    return await search.rows(query, level, offset, offset + limit, sample)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _ms(t: datetime) -> int:
    """A Datetime as SQL visibility keeps it: in milliseconds, rounded half up, but never
    up into the next second (SQLite's `%f`)."""
    us = ((t if t.tzinfo else t.replace(tzinfo=UTC)) - _EPOCH) // timedelta(microseconds=1)
    fraction = us % 1_000_000
    return (us - fraction) // 1000 + min((fraction + 500) // 1000, 999)


def _instant(x: int) -> str:
    """The first instant whose Datetime keeps millisecond `x` or later: a Datetime compares
    with it alike on every store (SQLite compares the text of its milliseconds, the others
    times)."""
    us = x * 1000 - (500 if x % 1000 else 0)
    t = _EPOCH + timedelta(microseconds=us)
    return quote(t.isoformat(timespec="microseconds").replace("+00:00", "Z"))


def stamp(t: datetime) -> datetime:
    """`t` to the millisecond, as GraphCreatedAt / GraphUpdatedAt are best written: every
    store then orders it alike (a time half a millisecond from one is rounded by SQLite
    with a double, which may differ from the others by one millisecond)."""
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


def _chr(c: int) -> str:
    # No workflow id holds a surrogate: a cut there parts ids as the next character does.
    return chr(0xE000 if 0xD800 <= c < 0xE000 else c)


def _succ(prefix: str) -> str | None:
    """The least string above every string that starts with `prefix` (None: none is)."""
    prefix = prefix.rstrip("\U0010ffff")
    return prefix[:-1] + _chr(ord(prefix[-1]) + 1) if prefix else None


class _Level:
    """One key of a sort order, as integers in [lo, hi]: a row's value, and the clauses
    that part a group's rows at a cut (value < x, value >= x; None: every row). Rows
    without a value are in neither, and come after all others."""

    lo = 0
    hi = 0

    def value(self, run: WorkflowExecution) -> int | None:
        raise NotImplementedError

    def lt(self, x: int) -> str | None:
        raise NotImplementedError

    def ge(self, x: int) -> str | None:
        raise NotImplementedError

    def group(self, v: int) -> tuple[str, _Level | None]:
        """The rows whose value is `v`, and the level that orders them."""
        raise NotImplementedError

    def nulls(self) -> tuple[str, _Level] | None:
        """The rows without a value, and the level that orders them."""
        return None

    def key(self, run: WorkflowExecution, asc: bool) -> tuple[Any, ...]:
        """The whole sort key (this level's, then the next ones'), nulls last either way."""
        raise NotImplementedError

    def _keyed(self, run: WorkflowExecution, asc: bool, then: _Level) -> tuple[Any, ...]:
        v = self.value(run)
        return ((v is None) == asc, v or 0, *then.key(run, asc))


class _Id(_Level):
    """The workflow id's character after `prefix` (0: the id is the prefix itself)."""

    hi = 0x110000

    def __init__(self, prefix: str = "") -> None:
        self.prefix = prefix

    def value(self, run: WorkflowExecution) -> int | None:
        rest = run.id[len(self.prefix):]
        return ord(rest[0]) + 1 if rest else 0

    def lt(self, x: int) -> str | None:
        if x > self.hi:
            return None
        op = "<=" if x == 1 else "<"  # below the first character: the prefix itself
        return f"WorkflowId {op} {quote(self.prefix + (_chr(x - 1) if x > 1 else ''))}"

    def ge(self, x: int) -> str | None:
        if x <= 0:
            return None
        op = ">" if x == 1 else ">="
        return f"WorkflowId {op} {quote(self.prefix + (_chr(x - 1) if x > 1 else ''))}"

    def group(self, v: int) -> tuple[str, _Level | None]:
        if v == 0:
            return f"WorkflowId = {quote(self.prefix)}", None
        upper = self.lt(v + 1)
        clause = f"WorkflowId >= {quote(self.prefix + _chr(v - 1))}"
        return (f"{clause} AND {upper}" if upper else clause), _Id(self.prefix + _chr(v - 1))

    def key(self, run: WorkflowExecution, asc: bool) -> tuple[Any, ...]:
        return (run.id,)


class _Time(_Level):
    """A Datetime search attribute, in milliseconds (as SQL visibility keeps it)."""

    lo = _ms(datetime(1, 1, 2, tzinfo=UTC))
    hi = _ms(datetime(9999, 12, 30, tzinfo=UTC))

    def __init__(self, attr: SearchAttributeKey[datetime]) -> None:
        self.attr = attr

    def value(self, run: WorkflowExecution) -> int | None:
        t = run.typed_search_attributes.get(self.attr)
        return None if t is None else _ms(t)

    def lt(self, x: int) -> str | None:
        return f"{self.attr.name} < {_instant(x)}"

    def ge(self, x: int) -> str | None:
        return f"{self.attr.name} >= {_instant(x)}"

    def group(self, v: int) -> tuple[str, _Level | None]:
        return f"{self.ge(v)} AND {self.lt(v + 1)}", _Id()

    def nulls(self) -> tuple[str, _Level] | None:
        return f"{self.attr.name} IS NULL", _Id()

    def key(self, run: WorkflowExecution, asc: bool) -> tuple[Any, ...]:
        return self._keyed(run, asc, _Id())


class _Status(_Level):
    """GraphStatus in the API's order; within one, by creation."""

    hi = len(STATUS_ORDER) - 1

    def value(self, run: WorkflowExecution) -> int | None:
        status = run.typed_search_attributes.get(GRAPH_STATUS)
        return STATUS_ORDER.index(status) if status in STATUS_ORDER else None

    def _among(self, statuses: Sequence[str]) -> str:
        return f"GraphStatus IN ({', '.join(quote(s) for s in statuses)})"

    def lt(self, x: int) -> str | None:
        return self._among(STATUS_ORDER[:x])

    def ge(self, x: int) -> str | None:
        return self._among(STATUS_ORDER[x:])

    def group(self, v: int) -> tuple[str, _Level | None]:
        return f"GraphStatus = {quote(STATUS_ORDER[v])}", _Time(CREATED_AT)

    def nulls(self) -> tuple[str, _Level] | None:
        return "GraphStatus IS NULL", _Time(CREATED_AT)

    def key(self, run: WorkflowExecution, asc: bool) -> tuple[Any, ...]:
        return self._keyed(run, asc, _Time(CREATED_AT))


_LEVELS: dict[str, Any] = {
    "created_at": lambda: _Time(CREATED_AT), "updated_at": lambda: _Time(UPDATED_AT),
    "state_updated_at": lambda: _Time(UPDATED_AT), "thread_id": _Id, "status": _Status}


class _Search:
    """One page's search. Cuts are integers of the level in the page's order (`t`: the
    value, negated when descending); R(c) counts the rows (with a value) before cut c."""

    def __init__(self, client: Client, asc: bool) -> None:
        self.client, self.asc, self.sign = client, asc, 1 if asc else -1

    async def fetch(self, query: str, size: int) -> list[WorkflowExecution]:
        size = max(size, 1)
        return [run async for run in self.client.list_workflows(
            query, page_size=min(size, 1000), limit=size)]

    def sort(self, level: _Level, runs: list[WorkflowExecution]) -> list[WorkflowExecution]:
        return sorted(runs, key=lambda r: level.key(r, self.asc), reverse=not self.asc)

    def _t(self, level: _Level, run: WorkflowExecution) -> int | None:
        v = level.value(run)
        return None if v is None else self.sign * v

    def _edges(self, level: _Level) -> tuple[int, int]:
        return (level.lo, level.hi + 1) if self.asc else (-level.hi, 1 - level.lo)

    def _before(self, level: _Level, c: int) -> str | None:
        return level.lt(c) if self.asc else level.ge(1 - c)

    def _after(self, level: _Level, c: int) -> str | None:
        return level.ge(c) if self.asc else level.lt(1 - c)

    async def _count(self, *clauses: str | None) -> int:
        return await count(self.client, " AND ".join(c for c in clauses if c))

    async def rows(self, q: str, level: _Level, start: int, end: int,
                   sample: list[WorkflowExecution], n: int | None = None
                   ) -> list[WorkflowExecution]:
        """Rows [start, end) of q's `n` (None: not counted) rows in the level's order."""
        if isinstance(level, _Id) and len(sample) > 1:
            level = await self._common_prefix(q, level, sample)
        if len(sample) < 2 and (n is None or n > end - start + 2 * SLACK):
            sample = await self.fetch(q, SAMPLE)  # a group the first rows missed
        lo, hi = self._edges(level)
        return await self._narrow(q, level, start, end, lo, 0, hi,
                                  n if level.nulls() is None else None, sample)

    async def _common_prefix(self, q: str, level: _Id, sample: list[WorkflowExecution]
                             ) -> _Id:
        """Skip the characters every id shares (an id prefix, "thread-"): two counts of
        nothing, not two per character."""
        first, last = min(r.id for r in sample), max(r.id for r in sample)
        prefix = next((first[:i] for i, ch in enumerate(first) if last[i] != ch), first)
        if len(prefix) < len(level.prefix) + 2:
            return level
        above = _succ(prefix)
        if await self._count(q, f"WorkflowId < {quote(prefix)}") or (
                above and await self._count(q, f"WorkflowId >= {quote(above)}")):
            return level
        return _Id(prefix)

    async def _narrow(self, q: str, level: _Level, start: int, end: int, a: int, ra: int,
                      b: int, rb: int | None, sample: list[WorkflowExecution]
                      ) -> list[WorkflowExecution]:
        """Rows [start, end) in the level's order, between cuts a < b where R(a) = ra <=
        start and R(b) = rb >= end (rb None: b is the domain's end, not counted yet)."""
        lo, hi = self._edges(level)
        tail: list[WorkflowExecution] = []
        gallop, width = 0, None
        while True:
            if b == hi and rb is not None and rb < end and not tail:
                tail = await self._nulls(q, level, max(start, rb) - rb, end - rb)
                end = rb
            if start >= end:
                return tail
            if rb is not None and rb - ra <= end - start + 2 * SLACK:
                return await self._window(q, level, start, end, a, ra, b, rb, sample) + tail
            if b - a == 1:
                if rb is None:  # b is the domain's end: how many rows have a value
                    rb = await self._count(q, self._before(level, b))
                    continue
                # One value, more rows than a window: they are ordered by the next key.
                clause, then = level.group(self.sign * a)
                assert then is not None  # one id is one row
                inside = [r for r in sample if self._t(level, r) == a]
                return await self.rows(f"{q} AND {clause}", then, start - ra, end - ra,
                                       inside, rb - ra) + tail
            lower = start - ra > SLACK  # the first cut is still far from the page
            target = start - SLACK // 2 if lower else end + SLACK // 2
            if a != lo and b != hi and rb is not None:
                # Interpolate between the two cuts; halve when that did not halve it.
                c = a + (target - ra) * (b - a) // max(rb - ra, 1)
                if width is not None and 2 * (b - a) > width:
                    c = (a + b) // 2
                width = b - a
            elif a != lo or b != hi:  # one cut in the data: gallop away from it
                values = sorted(t for r in sample if (t := self._t(level, r)) is not None)
                spacing = max(1, (values[-1] - values[0]) // len(values)) if values else 1
                step = spacing * 4 ** gallop
                gallop += 1
                c = b - (rb - target) * step if b != hi and rb is not None else (
                    a + (target - ra) * step)
            else:  # nothing counted yet: the sample's rows, as if they were the first
                values = sorted(t for r in sample if (t := self._t(level, r)) is not None)
                if values:
                    i = min(max((start if lower else end - 1) - ra, 0), len(values) - 1)
                    c = values[i] + (0 if lower else 1)
                else:
                    c = (a + b) // 2
            c = min(max(c, a + 1), b if rb is None else b - 1)
            rc = await self._count(q, self._before(level, c))
            if c == b:
                rb = rc
            elif rc <= start:
                a, ra = c, rc
            elif rc >= end:
                b, rb = c, rc
            else:  # the page spans the cut: each side on its own
                return (await self._narrow(q, level, start, rc, a, ra, c, rc, sample)
                        + await self._narrow(q, level, rc, end, c, rc, b, rb, sample) + tail)

    async def _window(self, q: str, level: _Level, start: int, end: int, a: int, ra: int,
                      b: int, rb: int, sample: list[WorkflowExecution]
                      ) -> list[WorkflowExecution]:
        """The rows between cuts a and b, from the sample when it holds them all."""
        inside = [r for r in sample if (t := self._t(level, r)) is not None and a <= t < b]
        if len(inside) != rb - ra:
            clauses = (q, self._after(level, a), self._before(level, b))
            inside = await self.fetch(" AND ".join(c for c in clauses if c), rb - ra)
        return self.sort(level, inside)[start - ra:end - ra]

    async def _nulls(self, q: str, level: _Level, start: int, end: int
                     ) -> list[WorkflowExecution]:
        """Rows [start, end) of those without the level's value (after all others)."""
        nulls = level.nulls()
        if nulls is None:
            return []
        clause, then = nulls
        return await self.rows(f"{q} AND {clause}", then, start, end, [])
