"""The store API (`/store/items`, `/store/items/search`, `/store/namespaces`): LangGraph's
long-term memory, read and written by clients (langgraph-sdk's `client.store`).

It serves the store the API is given (`build_app(store=...)`, `graphrun serve --store
module:attr`; `graphrun dev` without --store: the in-memory one langgraph.json's `store`
describes, graphrun.server.memory): any LangGraph `BaseStore`. For the nodes and the
API to see the same memories, give the workers the same shared store (`graphrun worker
--store`, e.g. LangGraph's PostgresStore); an in-memory store would be the API
process's own. Without a store every route answers 404 saying how to configure one.
A put's `ttl` needs a store that keeps TTLs (`supports_ttl`): another store refuses it
(422).
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, Field, field_validator

from graphrun.server import auth
from graphrun.server.context import NotFound

router = APIRouter(tags=["store"])


def _labels(namespace: list[str]) -> list[str]:
    for label in namespace:
        if not label or "." in label:
            raise ValueError(f"namespace labels are non-empty and have no '.': "
                             f"{label!r:.80}")
    return namespace


class PutItem(BaseModel):
    namespace: list[str] = Field(min_length=1)
    key: str = Field(min_length=1)
    value: dict[str, Any]
    index: Literal[False] | list[str] | None = None  # None: the store's own fields
    ttl: float | None = Field(None, gt=0)  # minutes

    _ns = field_validator("namespace")(_labels)


class DeleteItem(BaseModel):
    namespace: list[str] = Field(min_length=1)
    key: str = Field(min_length=1)

    _ns = field_validator("namespace")(_labels)


class SearchItems(BaseModel):
    namespace_prefix: list[str] = []
    filter: dict[str, Any] | None = None
    limit: int = Field(10, ge=1, le=1000)
    offset: int = Field(0, ge=0)
    query: str | None = None
    refresh_ttl: bool | None = None


class ListNamespaces(BaseModel):
    prefix: list[str] | None = None
    suffix: list[str] | None = None
    max_depth: int | None = Field(None, ge=1)
    limit: int = Field(100, ge=1, le=1000)
    offset: int = Field(0, ge=0)


def _store(request: Request) -> Any:
    store = request.app.state.store
    if store is None:
        raise NotFound("No store is configured: serve the API with one "
                       "(graphrun serve --store module:attr, build_app(store=...)).")
    return store


def _item(item: Any) -> dict[str, Any]:
    out = {"namespace": list(item.namespace), "key": item.key, "value": item.value,
           "created_at": item.created_at.isoformat(), "updated_at": item.updated_at.isoformat()}
    if getattr(item, "score", None) is not None:
        out["score"] = item.score
    return out


@router.put("/store/items", status_code=204)
async def put_item(body: PutItem, request: Request) -> Response:
    v = {"namespace": tuple(body.namespace), "key": body.key, "value": body.value,
         "index": body.index, "ttl": body.ttl}
    await auth.store(request, "put", v)  # its handler may rewrite the namespace
    store = _store(request)
    if v["ttl"] is not None and not getattr(store, "supports_ttl", False):
        raise ValueError(f"ttl: the store served ({type(store).__name__}) keeps no TTLs; "
                         f"put the item without one, or serve a store that keeps them "
                         f"(graphrun dev's own in-memory store does)")
    kwargs: dict[str, Any] = {} if v["ttl"] is None else {"ttl": v["ttl"]}
    if v["index"] is not None:
        kwargs["index"] = v["index"]
    await store.aput(v["namespace"], v["key"], v["value"], **kwargs)
    return Response(status_code=204)


@router.get("/store/items")
async def get_item(namespace: str, key: str, request: Request,
                   refresh_ttl: bool | None = None) -> dict[str, Any] | None:
    ns = tuple(namespace.split(".")) if namespace else ()
    v = {"namespace": ns, "key": key, "refresh_ttl": refresh_ttl}
    await auth.store(request, "get", v)
    kwargs = {} if v["refresh_ttl"] is None else {"refresh_ttl": v["refresh_ttl"]}
    item = await _store(request).aget(v["namespace"], v["key"], **kwargs)
    return None if item is None else _item(item)  # a missing item: null, as LangGraph's


@router.delete("/store/items", status_code=204)
async def delete_item(body: DeleteItem, request: Request) -> Response:
    v = {"namespace": tuple(body.namespace), "key": body.key}
    await auth.store(request, "delete", v)
    await _store(request).adelete(v["namespace"], v["key"])
    return Response(status_code=204)


@router.post("/store/items/search")
async def search_items(body: SearchItems, request: Request) -> dict[str, Any]:
    v = {"namespace": tuple(body.namespace_prefix), "filter": body.filter,
         "limit": body.limit, "offset": body.offset, "query": body.query,
         "refresh_ttl": body.refresh_ttl}
    owned = await auth.store(request, "search", v)
    if owned:  # the handler's filter, on the items' values (as LangGraph's)
        v["filter"] = {"$and": [v["filter"], owned]} if v["filter"] else owned
    kwargs = {} if v["refresh_ttl"] is None else {"refresh_ttl": v["refresh_ttl"]}
    items = await _store(request).asearch(
        v["namespace"], query=v["query"], filter=v["filter"],
        limit=v["limit"], offset=v["offset"], **kwargs)
    return {"items": [_item(i) for i in items]}


@router.post("/store/namespaces")
async def list_namespaces(body: ListNamespaces, request: Request) -> dict[str, Any]:
    v = {"namespace": tuple(body.prefix) if body.prefix else None,
         "suffix": tuple(body.suffix) if body.suffix else None,
         "max_depth": body.max_depth, "limit": body.limit, "offset": body.offset}
    await auth.store(request, "list_namespaces", v)
    found = await _store(request).alist_namespaces(
        prefix=v["namespace"], suffix=v["suffix"],
        max_depth=v["max_depth"], limit=v["limit"], offset=v["offset"])
    return {"namespaces": [list(ns) for ns in found]}
