"""Messages whose id compares equal to any string (from upstream tests/messages.py).

Upstream: langchain-ai/langgraph, libs/langgraph/tests/messages.py
(commit f09cfe8ffc1eeffd68f4b628ed69c30f7cad229f).
"""

from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk, HumanMessage, ToolMessage

from tests.langgraph_suite.any_str import AnyStr


def _AnyIdAIMessage(**kwargs: Any) -> AIMessage:
    message = AIMessage(**kwargs)
    message.id = AnyStr()
    return message


def _AnyIdAIMessageChunk(**kwargs: Any) -> AIMessageChunk:
    message = AIMessageChunk(**kwargs)
    message.id = AnyStr()
    return message


def _AnyIdHumanMessage(**kwargs: Any) -> HumanMessage:
    message = HumanMessage(**kwargs)
    message.id = AnyStr()
    return message


def _AnyIdToolMessage(**kwargs: Any) -> ToolMessage:
    message = ToolMessage(**kwargs)
    message.id = AnyStr()
    return message
