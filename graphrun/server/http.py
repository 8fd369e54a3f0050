"""langgraph.json's `http` section: the user's own app and routes, CORS, routes turned
off, and the request headers a run's config carries."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Headers a run never carries, whatever the patterns say (as LangGraph's server).
NEVER = frozenset({"x-api-key", "x-tenant-id", "x-service-key", "authorization"})
# `disable_*` keys, by the part of the API they turn off.
DISABLES = ("assistants", "threads", "runs", "store", "meta", "mcp", "ui", "webhooks", "a2a")
# Keys read here; the others are named in a warning (graphrun.server.config).
KEYS = frozenset({"app", "cors", "configurable_headers", "enable_custom_route_auth",
                  *(f"disable_{d}" for d in DISABLES)})
CORS_KEYS = frozenset({"allow_origins", "allow_methods", "allow_headers", "allow_credentials",
                       "allow_origin_regex", "expose_headers", "max_age"})


@dataclass
class HttpOptions:
    """What `build_app(http=...)` takes from langgraph.json's `http`."""

    app: Any = None  # a Starlette/FastAPI app: its routes come before graphrun's
    cors: dict[str, Any] | None = None  # CORSMiddleware's options
    disabled: frozenset[str] = frozenset()  # of DISABLES
    headers: HeaderPatterns = field(default_factory=lambda: HeaderPatterns())
    custom_route_auth: bool = False  # the user's routes need auth too


class HeaderPatterns:
    """`configurable_headers`: `includes` / `excludes` patterns (`*` the only wildcard).
    A run's config carries the request headers `includes` names, but those `excludes`
    names and NEVER; without `includes`, none (as LangGraph's server: measured)."""

    def __init__(self, includes: list[str] | None = None,
                 excludes: list[str] | None = None) -> None:
        self.includes = [_pattern(p) for p in includes or ()]
        self.excludes = [_pattern(p) for p in excludes or ()]

    def of(self, headers: Mapping[str, str]) -> dict[str, str]:
        """The headers of a request a run's `configurable` carries."""
        return {k: v for k, v in ((k.lower(), v) for k, v in headers.items())
                if self._carried(k)}

    def _carried(self, key: str) -> bool:
        if key in NEVER or any(p.fullmatch(key) for p in self.excludes):
            return False
        return any(p.fullmatch(key) for p in self.includes)


def _pattern(text: str) -> re.Pattern[str]:
    # Literals and `*` only: a pattern from a config file never backtracks badly.
    return re.compile(".*".join(re.escape(part) for part in text.lower().split("*")))


def options(http: Mapping[str, Any], load: Any) -> HttpOptions:
    """HttpOptions from langgraph.json's `http` (`load` turns "./file.py:attr" into the
    object). Raises ValueError naming a bad value."""
    cors = http.get("cors")
    if cors is not None and (not isinstance(cors, dict) or set(cors) - CORS_KEYS):
        raise ValueError(f"http.cors: expected an object of {sorted(CORS_KEYS)}, got "
                         f"{cors!r}")
    headers = http.get("configurable_headers") or {}
    if not isinstance(headers, dict):
        raise ValueError(f"http.configurable_headers: expected an object, got {headers!r}")
    app = load(http["app"]) if http.get("app") else None
    if app is not None and not hasattr(app, "routes"):
        raise ValueError(f"http.app: {http['app']!r} is a {type(app).__name__}, not a "
                         f"Starlette or FastAPI app")
    return HttpOptions(
        app=app, cors=dict(cors) if cors is not None else None,
        disabled=frozenset(d for d in DISABLES if http.get(f"disable_{d}")),
        headers=HeaderPatterns(headers.get("includes") or headers.get("include"),
                               headers.get("excludes") or headers.get("exclude")),
        custom_route_auth=bool(http.get("enable_custom_route_auth")))
