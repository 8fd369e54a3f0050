"""LangGraph's syrupy snapshots, read without syrupy (not installed here).

`__snapshots__/*.ambr` are upstream's files, copied unchanged (commit
f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f). As syrupy does, the n-th `== snapshot` of a
test compares with the entry named `<test id>` (n = 0) or `<test id>.<n>`, where the test
id is pytest's (`test_x[memory]`). Only reading is supported: a snapshot is never
written or updated.

The one normalisation, and graphrun's one difference on purpose: in a drawing's JSON
(`Graph.to_json()`, or its `json.dumps`), a node's `data.id` names the class of the
node's object. LangGraph's is its own (`["langgraph", "_internal", "_runnable",
"RunnableCallable"]`, `CompiledStateGraph`, `ToolNode`, ...); graphrun's is
`["graphrun", "drawing", "GraphNode"]`. Both sides have it replaced by `"<node class>"`
before comparing; everything else of the JSON is compared as it is.
"""

from __future__ import annotations

import ast
import copy
import json
import re
from functools import cache
from pathlib import Path
from typing import Any

SNAPSHOTS = Path(__file__).parent / "__snapshots__"
NODE_CLASS = "<node class>"
GRAPHRUN_NODE_ID = ["graphrun", "drawing", "GraphNode"]


@cache
def read_ambr(name: str) -> dict[str, str]:
    """`{snapshot name: serialized text}` of one .ambr file."""
    entries: dict[str, str] = {}
    current: str | None = None
    lines: list[str] = []
    for line in (SNAPSHOTS / name).read_text().split("\n"):
        if line.startswith("# name: "):
            current, lines = line[len("# name: "):], []
        elif line == "# ---" and current is not None:
            entries[current] = "\n".join(lines)
            current = None
        elif current is not None:
            lines.append(line)
    return entries


def parse(text: str) -> Any:
    """An amber value: a string (one line, or `'''` lines indented by two) or a dict/list."""
    if text.startswith("  '''"):
        body = text.split("\n")[1:-1]  # between the quotes
        return "\n".join(line[2:] for line in body)
    value = text.strip()
    if value.startswith("'"):
        return ast.literal_eval(value)
    value = re.sub(r"\bdict\(\{", "{", value)
    value = re.sub(r"\blist\(\[", "[", value)
    value = value.replace("})", "}").replace("])", "]")
    return ast.literal_eval(value)


def _drawing(value: Any) -> Any:
    """A drawing's JSON (a dict, or its text) with each node's `data.id` normalised."""
    as_text = isinstance(value, str)
    if as_text:
        try:
            value = json.loads(value)
        except ValueError:
            return None
    if not (isinstance(value, dict) and {"nodes", "edges"} <= set(value)):
        return None
    value = copy.deepcopy(value)
    for node in value["nodes"]:
        if isinstance(node.get("data"), dict) and "id" in node["data"]:
            node["data"]["id"] = NODE_CLASS
    return value


class Snapshot:
    """The `snapshot` fixture: `actual == snapshot` compares with the next entry."""

    def __init__(self, files: list[str], test_id: str) -> None:
        self.files = files
        self.test_id = test_id
        self.index = 0
        self.expected: Any = None

    def _entry(self) -> tuple[str, str]:
        name = self.test_id if self.index == 0 else f"{self.test_id}.{self.index}"
        found = [(f, read_ambr(f)[name]) for f in self.files if name in read_ambr(f)]
        if len(found) != 1:
            raise LookupError(f"snapshot {name!r}: found in {[f for f, _ in found]} of "
                              f"{self.files}; expected exactly one")
        return name, found[0][1]

    def next(self) -> Any:
        """The next entry's value, for a port that compares it some other way."""
        _name, text = self._entry()
        self.index += 1
        self.expected = parse(text)
        return self.expected

    def __eq__(self, actual: object) -> bool:
        self.next()
        drawn, wanted = _drawing(actual), _drawing(self.expected)
        if drawn is not None and wanted is not None:
            self.expected = wanted
            return bool(drawn == wanted)
        return bool(actual == self.expected)

    __hash__ = None  # type: ignore[assignment]

    drawing = staticmethod(_drawing)

    def __repr__(self) -> str:
        return f"<snapshot {self.test_id}.{self.index - 1}: {self.expected!r}>"
