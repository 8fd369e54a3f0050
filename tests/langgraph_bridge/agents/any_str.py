"""Helper ported from langchain-ai/langchain.

Upstream: libs/langchain_v1/tests/unit_tests/agents/any_str.py
(stored blob read at commit 79dcec77a2e91a0aef1531bfc75a9bfae0260cf9). Unchanged.
"""

import re
from typing import Union


class AnyStr(str):
    __slots__ = ("prefix",)

    def __init__(self, prefix: Union[str, re.Pattern] = "") -> None:
        super().__init__()
        self.prefix = prefix

    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and (
            other.startswith(self.prefix)
            if isinstance(self.prefix, str)
            else self.prefix.match(other)
        )

    def __hash__(self) -> int:
        return hash((str(self), self.prefix))
