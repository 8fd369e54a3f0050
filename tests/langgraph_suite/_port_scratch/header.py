# ruff: noqa: B010, B011, B905, RUF005, RUF043, UP035  (upstream code kept as is)
"""Scratch: test_pregel_async.py port in progress (merged into ../test_pregel_async.py)."""

import asyncio
import enum
import operator
import sys
import uuid
from collections import deque
from dataclasses import replace
from time import perf_counter
from typing import Annotated, Any, Literal, Optional
from unittest.mock import patch

import pytest
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.runnables import RunnableConfig
from langchain_core.version import VERSION as LANGCHAIN_CORE_VERSION
from langgraph.types import StreamWriter  # graphrun: an annotation only; graphrun has no alias
from pydantic import BaseModel, Field
from typing_extensions import NotRequired, TypedDict

from graphrun import (
    END,
    START,
    Command,
    InMemorySaver,
    Interrupt,
    InvalidUpdateError,
    NodeError,
    PregelTask,
    RetryPolicy,
    Send,
    StateGraph,
    StateSnapshot,
    StateUpdate,
    interrupt,
)
from graphrun.messages import MessagesState, add_messages
from graphrun.types import PULL
from tests.langgraph_suite.any_str import AnyStr, FloatBetween
from tests.langgraph_suite.messages import (
    _AnyIdAIMessage,
    _AnyIdAIMessageChunk,
    _AnyIdHumanMessage,
    _AnyIdToolMessage,
)

BaseCheckpointSaver = InMemorySaver  # graphrun: annotations only
Durability = str  # graphrun: annotations only (LangGraph's Literal["sync", "async", "exit"])
# graphrun: LangGraph's internal config key (a callback called as each node finishes)
CONFIG_KEY_NODE_FINISHED = "__pregel_node_finished"

pytestmark = pytest.mark.anyio

NEEDS_CONTEXTVARS = pytest.mark.skipif(
    sys.version_info < (3, 11),
    reason="Python 3.11+ is required for async contextvars support",
)
