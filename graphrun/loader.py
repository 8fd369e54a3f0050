"""One loader for the objects a command line or langgraph.json names by reference:
"module:attr" (the attribute may be dotted), or, relative to a project folder,
"./file.py:attr". A reference is configuration a person wrote, never data a thread
received."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any


class RefError(ValueError):
    """A reference that is malformed or names nothing; its text says which."""


def split(ref: str) -> tuple[str, str]:
    """(where, attr) of "where:attr"; RefError when either is missing."""
    where, sep, attr = ref.rpartition(":")
    if not sep or not where or not attr:
        raise RefError(f"expected MODULE:ATTR, got {ref!r}")
    return where, attr


def load(ref: str, *, base: Path | None = None, module_name: str | None = None) -> Any:
    """The object `ref` names. With `base`, a `where` that is a path ("./graph.py",
    "src/agent.py") is a file under `base`, executed as module `module_name`, and a
    module is looked for under `base` too. An ImportError of the module (or an error
    its code raises) propagates as it is; RefError for a missing file or attribute."""
    where, attr = split(ref)
    if base is not None and (where.endswith(".py") or "/" in where):
        file = (base / where).resolve()
        spec = importlib.util.spec_from_file_location(
            module_name or f"graphrun_loaded_{file.stem}", file)
        if spec is None or spec.loader is None or not file.exists():
            raise RefError(f"no Python file {file}.")
        module: Any = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        if str(file.parent) not in sys.path:
            sys.path.insert(0, str(file.parent))
        spec.loader.exec_module(module)
    else:
        if base is not None and str(base) not in sys.path:
            sys.path.insert(0, str(base))
        module = importlib.import_module(where)
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise RefError(f"module {where!r} has no attribute {attr!r}")
        obj = getattr(obj, part)
    return obj


__all__ = ["RefError", "load", "split"]
