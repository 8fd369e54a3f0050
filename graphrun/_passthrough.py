"""Importing LangChain from inside a Temporal workflow sandbox (a user's workflow module
that imports graphrun): langchain-core brings langsmith's HTTP client, which the sandbox
refuses, so it is passed through. Outside a worker temporalio is not imported for it."""

from __future__ import annotations

import contextlib
import sys
from typing import Any


def passed_through() -> Any:
    workflow = sys.modules.get("temporalio.workflow")
    if workflow is None:
        return contextlib.nullcontext()
    return workflow.unsafe.imports_passed_through()
