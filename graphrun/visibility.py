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

import asyncio
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
# sorted by a time is found from counts: how many rows lie before a time is monotone in
# it, so a search moves two cuts (times) to within a few rows of the page's edges, then
# lists the rows between them and sorts them here. A count reads the rows it counts, so
# each is taken from the nearest counted cut: after the first, they are narrow and cheap
# at any number of threads. The first rows visibility lists are the most recently
# started, so the newest page is usually in them: one narrow count confirms it.
# Elasticsearch (Temporal Cloud) takes the same queries.

THREADS = "WorkflowType IN ('GraphWorkflow', 'ThreadRecord') AND CloseTime IS NULL"
"""Every thread, once: its open workflow (closed runs are earlier runs, or threads from
before threads stayed open, which `graphrun migrate` reopens). `CloseTime IS NULL` is
`ExecutionStatus = 'Running'`, but SQLite counts it from one index: twice as fast."""

SortBy = Literal["created_at", "updated_at", "state_updated_at", "thread_id", "status"]
STATUS_ORDER = ("running", "failed", "done", "interrupted")
"""GraphStatus in the order of the API's names (busy, error, idle, interrupted)."""

WINDOW = 1_000  # rows of one page of visibility's list
SAMPLE = 16  # rows listed first, besides the page's own
SLACK = 8  # rows a cut may miss the page's edge by: a narrow count costs ~5 listed rows
_TIMES = {"created_at": CREATED_AT, "updated_at": UPDATED_AT, "state_updated_at": UPDATED_AT}
_MS_MAX = 2 ** 45  # past any Datetime a thread has (year 3084), in ms since 1970


def quote(value: str) -> str:
    """A string literal of Temporal's list filter."""
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def prefixed(prefix: str) -> str:
    """The clause of workflow ids that start with `prefix`: a range of ids where it can
    be (SQL visibility reads it from an index; STARTS_WITH is a LIKE that reads every
    row), else STARTS_WITH."""
    # The range ends at the prefix with its last character one up. Quotes, backslashes
    # and control characters do not reach SQL visibility intact; surrogates are no ids.
    if (not prefix or any(c in '"\\' or c < " " for c in prefix)
            or not ord(prefix[-1]) < 0xD7FF or prefix[-1] in "!["):
        return f"WorkflowId STARTS_WITH {quote(prefix)}"
    above = prefix[:-1] + chr(ord(prefix[-1]) + 1)
    return f"WorkflowId >= {quote(prefix)} AND WorkflowId < {quote(above)}"


def where(*, status: str | None = None, graph: str | None = None,
          metadata: Mapping[str, Any] | None = None, ids: Sequence[str] | None = None,
          base: str = THREADS, auth: Mapping[str, Any] | None = None) -> str:
    """The visibility query of the threads that match: GraphStatus, GraphName, every
    GraphMetadata entry of a metadata filter (KeywordList `=` is "contains"), and
    workflow ids; and an authorization handler's filter, `auth` (see `auth_clause`)."""
    clauses = [base]
    if status is not None:
        clauses.append(f"GraphStatus = {quote(status)}")
    if graph is not None:
        clauses.append(f"GraphName = {quote(graph)}")
    clauses += [f"GraphMetadata = {quote(e)}" for e in filter_entries(metadata or {})]
    if ids is not None:
        clauses.append(f"WorkflowId IN ({', '.join(quote(i) for i in ids) or quote('')})")
    if auth:
        clauses.append(auth_clause(auth))
    return " AND ".join(clauses)


def auth_clause(filters: Mapping[str, Any]) -> str:
    """The visibility condition of an authorization handler's filter on metadata (the
    LangGraph Server API's custom auth): `{key: value}` and `{key: {"$eq": value}}` are
    the entry of the key equal to that whole value (any JSON value); keys are ANDed;
    `$or` / `$and` take lists of such filters. `$contains` (an element of a list) has no
    entry of its own: ValueError."""
    parts: list[str] = []
    for key, value in filters.items():
        if key in ("$or", "$and"):
            groups = [auth_clause(g) for g in value]
            parts.append("(" + (" OR " if key == "$or" else " AND ").join(groups) + ")")
            continue
        if isinstance(value, dict):
            op = next(iter(value), None)
            if op != "$eq":
                raise ValueError(f"filter on {key!r}: {op!r} cannot be searched by")
            value = value[op]
        parts.append(f"GraphMetadata = {quote(entry(str(key), value))}")
    return "(" + " AND ".join(parts) + ")" if parts else "(WorkflowId != '')"  # any


async def count(client: Client, query: str) -> int:
    """How many executions match, exact at any count."""
    return (await client.count_workflows(query)).count


async def page(client: Client, query: str, sort_by: SortBy, order: Literal["asc", "desc"],
               offset: int, limit: int) -> list[WorkflowExecution]:
    """The executions at [offset, offset + limit) of those `query` matches, sorted by
    `sort_by` (ties by workflow id; rows without the time last), exact at any depth.
    `status` orders by STATUS_ORDER, then by creation time."""
    if limit <= 0:
        return []
    asc = order == "asc"
    if sort_by == "status":
        return await _by_status(client, query, asc, offset, limit)
    attr = _TIMES.get(sort_by)
    if attr is None:  # thread_id: ids have no range to search by counts: listed
        return _sort(await _fetch(client, query, None), None, asc)[offset:offset + limit]
    return await _TimePage(client, query, attr, asc).rows(offset, offset + limit)


async def _fetch(client: Client, query: str, limit: int | None) -> list[WorkflowExecution]:
    size = min(limit or WINDOW, WINDOW)
    return [r async for r in client.list_workflows(query, page_size=size, limit=limit)]


def stamp(t: datetime) -> datetime:
    """`t` to the millisecond, as graphrun writes GraphCreatedAt and GraphUpdatedAt: every
    visibility store then compares it with a millisecond literal alike."""
    return t.replace(microsecond=t.microsecond // 1000 * 1000)


def _ms(t: datetime) -> int:
    """A Datetime in whole milliseconds since 1970 (a naive one is UTC)."""
    aware = t if t.tzinfo else t.replace(tzinfo=UTC)
    return (aware - _EPOCH) // timedelta(milliseconds=1)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _at(ms: int) -> str:
    """The literal of the instant `ms` milliseconds after 1970 (UTC)."""
    t = _EPOCH + timedelta(milliseconds=ms)
    return quote(t.isoformat(timespec="milliseconds").replace("+00:00", "Z"))


def _key(attr: SearchAttributeKey[datetime] | None, run: WorkflowExecution) -> tuple[Any, ...]:
    value = run.typed_search_attributes.get(attr) if attr is not None else None
    return (0 if attr is None else _ms(value) if value is not None else _MS_MAX, run.id)


def _sort(rows: list[WorkflowExecution], attr: SearchAttributeKey[datetime] | None,
          asc: bool) -> list[WorkflowExecution]:
    """Ascending by (time, id), or its reverse; rows without the time last either way."""
    have = sorted((r for r in rows if attr is None
                   or r.typed_search_attributes.get(attr) is not None),
                  key=lambda r: _key(attr, r), reverse=not asc)
    return have + sorted((r for r in rows if attr is not None
                          and r.typed_search_attributes.get(attr) is None),
                         key=lambda r: r.id)


class _TimePage:
    """Rows of `query` in the order of a Datetime attribute, found from counts. A cut is
    a millisecond in the page's order (t = ms ascending, -ms descending); R(c) counts
    the rows with the time before cut c. Cuts run from `lo` (R = 0) to `hi` (every row
    with the time)."""

    def __init__(self, client: Client, query: str, attr: SearchAttributeKey[datetime],
                 asc: bool) -> None:
        self.client, self.query, self.attr, self.asc = client, query, attr, asc
        self.lo, self.hi = (0, _MS_MAX) if asc else (1 - _MS_MAX, 1)
        self.known = {self.lo: 0}  # counted cuts: R(c)

    def _t(self, run: WorkflowExecution) -> int | None:
        value = run.typed_search_attributes.get(self.attr)
        return None if value is None else _ms(value) if self.asc else -_ms(value)

    def _between(self, a: int, b: int) -> str:
        """The rows whose t is in [a, b)."""
        name, clauses = self.attr.name, [self.query]
        # Descending, t in [a, b) is a millisecond in (-b, -a].
        low, high = (a, b) if self.asc else (1 - b, 1 - a)
        if low > 0:
            clauses.append(f"{name} >= {_at(low)}")
        if high < _MS_MAX:
            clauses.append(f"{name} < {_at(high)}")
        if len(clauses) == 1:
            clauses.append(f"{name} IS NOT NULL")
        return " AND ".join(clauses)

    async def _rank(self, m: int, guess: float) -> int:
        """R(m), counted from the counted cut nearest to `m` in rows (`guess`: R(m) as
        expected), so that the count reads few rows."""
        if m in self.known:
            return self.known[m]
        a = max(c for c in self.known if c < m)
        above = [c for c in self.known if c > m]
        b = min(above) if above else None
        if b is not None and self.known[b] - guess < guess - self.known[a]:
            r = self.known[b] - await count(self.client, self._between(m, b))
        else:
            r = self.known[a] + await count(self.client, self._between(a, m))
        self.known[m] = r
        return r

    def _real(self, c: int | None) -> bool:
        return c is not None and c not in (self.lo, self.hi)

    async def rows(self, start: int, end: int) -> list[WorkflowExecution]:
        # The rows listed first (the most recently started): the newest page, often, and
        # where the search starts. Ascending, they are last: the rows with the time
        # (counted at once) place them.
        size = SAMPLE + end if not self.asc and start <= SAMPLE else SAMPLE
        if self.asc:
            first, total, nulls = await asyncio.gather(
                _fetch(self.client, self.query, size), count(self.client, self.query),
                count(self.client, f"{self.query} AND {self.attr.name} IS NULL"))
            self.known[self.hi] = total - nulls
        else:
            first = await _fetch(self.client, self.query, size)
        if len(first) < size:  # that was every row
            return _sort(first, self.attr, self.asc)[start:end]
        times = sorted(t for r in first if (t := self._t(r)) is not None)
        if not self.asc and len(times) >= end and await self._newest(times, end):
            return _sort(first, self.attr, False)[start:end]
        spacing = max(1.0, (times[-1] - times[0]) / max(len(times) - 1, 1)) if times else 1.0
        if times:  # the sample's first time, counted: where the search starts
            await self._rank(times[0], self.known.get(self.hi, len(times)) - len(times))
        a = await self._cut(start, True, spacing, len(times))
        b = await self._cut(end, False, spacing, len(times))
        ra, rb = self.known[a], self.known[b]
        out: list[WorkflowExecution] = []
        if start < rb and ra < rb:
            window = await _fetch(self.client, self._between(a, b), None)
            out = _sort(window, self.attr, self.asc)[start - ra:end - ra]
        if b == self.hi and end > rb:  # rows without the time come last, by id
            rest = await _fetch(self.client, f"{self.query} AND {self.attr.name} IS NULL",
                                None)
            out += sorted(rest, key=lambda r: r.id)[max(start - rb, 0):end - rb]
        return out

    async def _newest(self, times: list[int], n: int) -> bool:
        """Whether the sample holds the first `n` rows: every row up to the n-th's
        millisecond is in it (one narrow count)."""
        edge = times[n - 1] + 1
        return await self._rank(edge, n) == sum(t < edge for t in times)

    def _spacing(self, aim: int, default: float, rows: int) -> tuple[float, int]:
        """Milliseconds per row near rank `aim`, and over how many rows that was seen:
        between the two counted cuts nearest it (a secant), else the sample's."""
        near = sorted(((abs(r - aim), c, r) for c, r in self.known.items() if self._real(c)))
        for _, c, r in near[1:]:
            if r != near[0][2]:
                rows = abs(r - near[0][2])
                return max(abs(c - near[0][1]) / rows, 1e-3), rows
        return default, rows

    async def _cut(self, rank: int, below: bool, spacing: float, seen: int) -> int:
        """A counted cut c with R(c) <= rank (below) or R(c) >= rank (above), within
        SLACK rows of it where the times allow: from the counted cut nearest, by the
        rows' spacing there (doubled while counts find no rows: past the last, or in a
        gap); between two, by interpolation, halving when that stalls."""
        aim = rank - SLACK // 2 if below else rank + SLACK // 2
        halve, width, step = False, None, 1
        while True:
            known = self.known
            if below:
                a = max(c for c, r in known.items() if r <= rank)
                b = min((c for c, r in known.items() if r > rank), default=None)
                if rank - known[a] <= SLACK or a == self.hi or (b is not None and b - a <= 1):
                    return a
            else:
                a = max((c for c, r in known.items() if r < rank), default=self.lo)
                b = min((c for c, r in known.items() if r >= rank), default=None)
                if b is not None and (known[b] - rank <= SLACK or b - a <= 1):
                    return b
                if known.get(self.hi, rank) < rank:  # fewer rows with the time
                    return self.hi
            if self._real(a) and self._real(b):
                assert b is not None
                if halve or known[b] == known[a]:
                    m = (a + b) // 2
                else:  # where `aim` would be if times were spread evenly between a and b
                    m = a + round((b - a) * (aim - known[a]) / (known[b] - known[a]))
                halve = width is not None and not halve and (b - a) * 2 > width
                width = b - a
            elif self._real(a) or self._real(b):
                near = a if self._real(a) else b
                assert near is not None
                per_row, rows = self._spacing(aim, spacing, seen)
                # A spacing seen over few rows may be far off: a step spans at most 4
                # times as many, so that a count never reads many more rows than needed.
                need = aim - known[near]
                m = near + round(per_row * step * max(-4 * rows - 64, min(need, 4 * rows + 64)))
            else:  # nothing counted between the ends: halves
                m = (a + (self.hi if b is None else b)) // 2
            top = self.hi if b is None else b - 1
            m = min(max(m, a + 1), top)
            if m in known:  # no new cut there: halves, never counted (a, b are adjacent)
                m = min(max((a + top) // 2, a + 1), top)
            r = await self._rank(m, aim)
            nothing = r == known[a] or (b is not None and r == known[b])
            step = step * 2 if nothing else 1


async def _by_status(client: Client, query: str, asc: bool, offset: int, limit: int
                     ) -> list[WorkflowExecution]:
    """Status groups in STATUS_ORDER (reversed for desc), each by creation time: counts
    skip whole groups, a group's page is a time page."""
    out: list[WorkflowExecution] = []
    for status in STATUS_ORDER if asc else STATUS_ORDER[::-1]:
        if len(out) >= limit:
            break
        group = f"{query} AND GraphStatus = {quote(status)}"
        n = await count(client, group)
        if offset >= n:
            offset -= n
            continue
        out += await page(client, group, "created_at", "asc" if asc else "desc", offset,
                          limit - len(out))
        offset = 0
    return out
