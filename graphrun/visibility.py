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

Pure: the workflow imports it through the sandbox.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from temporalio.common import SearchAttributeKey
from xxhash import xxh3_64_hexdigest

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

# An entry longer than this is kept as its key and a hash of its value: equality still
# matches, and the list stays within the server's size limit for one value (2 KiB).
MAX_PLAIN_ENTRY = 64
MAX_ENTRIES_BYTES = 1_800


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=str)


def entry(path: str, value: Any) -> str:
    """The index entry of `path` (a top-level key, or `key.sub` for a nested one) equal
    to `value`: `path=<JSON>`, or `path#<hash of the JSON>` when that is long."""
    text = _canonical(value)
    plain = f"{path}={text}"
    if len(plain) <= MAX_PLAIN_ENTRY:
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
