"""The authenticated user as a run sees it: `config["configurable"]["langgraph_auth_user"]`
is a JSON object (`identity`, `is_authenticated`, `display_name` and what the API's
`@auth.authenticate` handler returned); `AuthUser` gives it LangGraph's user interface
(`user.identity` and `user["identity"]`), for `Runtime.server_info.user` and a
factory's `ServerRuntime.user`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any


class AuthUser(Mapping[str, Any]):
    """A user (a dict with `identity`, or an object with an `identity` attribute) with
    LangGraph's `BaseUser` protocol: `identity`, `is_authenticated` (default True),
    `display_name` (default: the identity), `permissions` (default []); any other field
    by attribute or by key; `dict()` is its JSON form."""

    def __init__(self, source: Any) -> None:
        if isinstance(source, AuthUser):
            source = source._source
        self._source: Any = source

    def _get(self, name: str, default: Any) -> Any:
        if isinstance(self._source, Mapping):
            return self._source.get(name, default)
        return _probe(self._source, name, default)

    @property
    def identity(self) -> str:
        ident = self._get("identity", None)
        if ident is None:
            raise AttributeError("the user has no identity")
        return str(ident)

    @property
    def is_authenticated(self) -> bool:
        return bool(self._get("is_authenticated", True))

    @property
    def display_name(self) -> str:
        return str(self._get("display_name", None) or self.identity)

    @property
    def permissions(self) -> list[str]:
        return list(self._get("permissions", None) or [])

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        if isinstance(self._source, Mapping):
            if name in self._source:
                return _dotted(self._source[name])
            raise AttributeError(f"the user has no {name!r}")
        return getattr(self._source, name)

    def dict(self) -> dict[str, Any]:
        """identity, is_authenticated and display_name, then the user's own fields."""
        src = self._source
        if isinstance(src, Mapping):
            own: Any = dict(src)
        elif callable(_probe(src, "model_dump", None)):
            own = src.model_dump(mode="json")
        elif callable(_probe(src, "dict", None)):
            own = src.dict()
        else:
            own = {}
        return {"identity": self.identity, "is_authenticated": self.is_authenticated,
                "display_name": self.display_name, **(own if isinstance(own, dict) else {})}

    def __getitem__(self, key: str) -> Any:
        return self.dict()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.dict())

    def __len__(self) -> int:
        return len(self.dict())

    def __repr__(self) -> str:
        return f"AuthUser({self.dict()!r})"

    def __reduce__(self) -> Any:
        return (AuthUser, (self._source,))


class _Dotted(dict):  # type: ignore[type-arg]
    """A nested dict of a user's fields, read by attribute too (`user.org.id`)."""

    def __getattr__(self, name: str) -> Any:
        if name in self:
            return _dotted(self[name])
        raise AttributeError(name)


def _dotted(value: Any) -> Any:
    return _Dotted(value) if isinstance(value, dict) and not isinstance(value, _Dotted) else value


def user_of(value: Any) -> AuthUser | None:
    """A run's `langgraph_auth_user` as a user (None if it is none)."""
    if value is None:
        return None
    if isinstance(value, AuthUser):
        return value
    if isinstance(value, Mapping) and "identity" in value:
        return AuthUser(value)
    if hasattr(value, "identity"):
        return AuthUser(value)
    return None


def _probe(obj: Any, name: str, default: Any) -> Any:
    """getattr that also survives a user object whose __getattr__ raises KeyError (a
    proxy over a dict, as LangGraph's server passes)."""
    try:
        return getattr(obj, name, default)
    except Exception:
        return default
