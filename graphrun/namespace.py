"""Whether a namespace is ready for graphrun: its search attributes, and its retention.

graphrun's workflows keep the search attributes of `graphrun.visibility.SEARCH_ATTRIBUTES`
current; a namespace where one is missing fails their workflow tasks. `graphrun setup`
registers them (`add_search_attributes`, idempotent) and reports the namespace's retention;
`graphrun worker`, `graphrun dev`, `graphrun serve` and the Server API app (`build_app`, at
start-up) check them (`require_search_attributes`) and refuse to start without them. A
worker of your own (`create_worker`, sync) can await the same check before it runs.

    await add_search_attributes(client)         # {"GraphStatus": "present", ...}
    await require_search_attributes(client)     # SetupError naming `graphrun setup ...`

Search attributes are managed through Temporal's operator service. On Temporal Cloud a
namespace API key (or certificate) may not add them: `OperatorDeniedError` then says how
(tcld, or the Cloud UI). Client calls only: the workflow never imports this module.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from temporalio.api.enums.v1 import IndexedValueType
from temporalio.service import RPCError, RPCStatusCode

from graphrun.errors import SetupError
from graphrun.visibility import SEARCH_ATTRIBUTES

__all__ = [
    "SHORT_RETENTION",
    "OperatorDeniedError",
    "add_search_attributes",
    "check_search_attributes",
    "cloud_steps",
    "format_retention",
    "registered_search_attributes",
    "require_search_attributes",
    "retention",
    "set_retention",
    "setup_command",
]

KINDS: dict[str, IndexedValueType.ValueType] = {
    "Text": IndexedValueType.INDEXED_VALUE_TYPE_TEXT,
    "Keyword": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD,
    "Int": IndexedValueType.INDEXED_VALUE_TYPE_INT,
    "Double": IndexedValueType.INDEXED_VALUE_TYPE_DOUBLE,
    "Bool": IndexedValueType.INDEXED_VALUE_TYPE_BOOL,
    "Datetime": IndexedValueType.INDEXED_VALUE_TYPE_DATETIME,
    "KeywordList": IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST,
}
"""A search attribute kind, as `temporal`/`tcld` name it, -> its IndexedValueType."""

_KIND_NAMES = {v: k for k, v in KINDS.items()}

_log = logging.getLogger(__name__)

SHORT_RETENTION = timedelta(days=7)
"""Below this, `graphrun setup` warns: threads stay open and do not depend on retention,
but closed executions (threads of earlier graphrun versions that finished, the runs a
thread continued as new, deleted threads' closed runs) are kept only that long."""

# What Temporal answers when these credentials may not use the operator API.
_DENIED = (RPCStatusCode.PERMISSION_DENIED, RPCStatusCode.UNIMPLEMENTED)


class OperatorDeniedError(SetupError):
    """The server refused the operator call (PERMISSION_DENIED / UNIMPLEMENTED): on
    Temporal Cloud a namespace API key may not manage search attributes or retention.
    The message gives the steps that work there (tcld, the Cloud UI)."""


def _address(client: Any) -> str:
    return str(getattr(client.service_client.config, "target_host", "") or "localhost:7233")


def setup_command(client: Any) -> str:
    """The `graphrun setup` command line for the client's server and namespace."""
    return f"graphrun setup --address {_address(client)} --namespace {client.namespace}"


def cloud_steps(namespace: str, attributes: Mapping[str, str] = SEARCH_ATTRIBUTES) -> list[str]:
    """How to register `attributes` on a Temporal Cloud namespace, one line each."""
    flags = " ".join(f'--search-attribute "{name}={kind}"' for name, kind in attributes.items())
    return [
        "On Temporal Cloud, add them as an account or namespace admin, either:",
        f"  tcld namespace search-attributes add --namespace {namespace} {flags}",
        f"or in the Cloud UI: Namespaces -> {namespace} -> Search attributes, adding "
        + ", ".join(f"{name} ({kind})" for name, kind in attributes.items()) + ".",
    ]


def _denied(exc: BaseException) -> bool:
    return isinstance(exc, RPCError) and exc.status in _DENIED


async def registered_search_attributes(client: Any) -> dict[str, str]:
    """The namespace's custom search attributes: name -> kind ("Keyword", ...).

    Raises:
        OperatorDeniedError: the server refused to list them (these credentials).
    """
    from temporalio.api.operatorservice.v1 import ListSearchAttributesRequest

    try:
        response = await client.operator_service.list_search_attributes(
            ListSearchAttributesRequest(namespace=client.namespace))
    except RPCError as exc:
        if _denied(exc):
            raise OperatorDeniedError(
                f"cannot list the search attributes of namespace {client.namespace!r} "
                f"({exc.status.name}: {exc.message})") from exc
        raise
    return {name: _KIND_NAMES.get(kind, IndexedValueType.Name(kind))
            for name, kind in response.custom_attributes.items()}


def _compare(registered: Mapping[str, str], wanted: Mapping[str, str]
             ) -> tuple[dict[str, str], dict[str, str]]:
    """(missing: name -> wanted kind, wrong: name -> registered kind)."""
    missing = {n: k for n, k in wanted.items() if n not in registered}
    wrong = {n: registered[n] for n, k in wanted.items() if n in registered and registered[n] != k}
    return missing, wrong


def _wrong_kind(wrong: Mapping[str, str], wanted: Mapping[str, str], namespace: str) -> str:
    return "; ".join(
        f"search attribute {name} is registered on namespace {namespace!r} as {kind}, "
        f"graphrun needs {wanted[name]}" for name, kind in wrong.items()) + (
        ". A search attribute's kind cannot be changed: remove it (`temporal operator "
        "search-attribute remove --name NAME`) if nothing else uses it, or use another "
        "namespace")


async def check_search_attributes(client: Any, attributes: Mapping[str, str] = SEARCH_ATTRIBUTES
                                  ) -> dict[str, str]:
    """name -> "present" or "missing" for each of `attributes` on the client's namespace.

    Raises:
        SetupError: one is registered with another kind (the message names it).
        OperatorDeniedError: the server refused to list them.
    """
    registered = await registered_search_attributes(client)
    missing, wrong = _compare(registered, attributes)
    if wrong:
        raise SetupError(_wrong_kind(wrong, attributes, client.namespace))
    return {name: "missing" if name in missing else "present" for name in attributes}


async def require_search_attributes(client: Any,
                                    attributes: Mapping[str, str] = SEARCH_ATTRIBUTES) -> None:
    """Raise `SetupError` unless the client's namespace has graphrun's search attributes,
    each of its kind; the message names the missing ones and the `graphrun setup` command
    that registers them.

    Call it where threads will write them (a client with ``search_attributes=True``, the
    default); not on the time-skipping test server, which cannot register them. When the
    server does not let these credentials list search attributes, nothing is checked.
    """
    try:
        state = await check_search_attributes(client, attributes)
    except OperatorDeniedError as exc:  # cannot tell: a workflow's first upsert will say
        _log.warning("graphrun did not check the search attributes: %s", exc)
        return
    missing = {name: attributes[name] for name, s in state.items() if s == "missing"}
    if missing:
        listed = ", ".join(f"{name} ({kind})" for name, kind in missing.items())
        raise SetupError(
            f"namespace {client.namespace!r} on {_address(client)} lacks graphrun's search "
            f"attribute{'s' if len(missing) > 1 else ''} {listed}: threads cannot be kept "
            f"without them. Register them with `{setup_command(client)}` "
            f"(on Temporal Cloud: with tcld or the Cloud UI, as `graphrun setup` explains).")


async def add_search_attributes(client: Any, attributes: Mapping[str, str] = SEARCH_ATTRIBUTES
                                ) -> dict[str, str]:
    """Register `attributes` (name -> kind) on the client's namespace, leaving those already
    there alone; name -> "added" or "present". Idempotent.

    Raises:
        SetupError: one is registered with another kind (nothing is added then), or the
            server refuses to add them (e.g. SQL visibility's per-kind limit).
        OperatorDeniedError: these credentials may not manage search attributes (Temporal
            Cloud); the message gives the tcld and Cloud UI steps.
    """
    from temporalio.api.operatorservice.v1 import AddSearchAttributesRequest

    unknown = sorted(set(attributes.values()) - set(KINDS))
    if unknown:
        raise ValueError(f"unknown search attribute kind(s) {unknown}; one of {list(KINDS)}")
    try:
        state = await check_search_attributes(client, attributes)
    except OperatorDeniedError as exc:
        raise OperatorDeniedError("\n".join([str(exc), *cloud_steps(client.namespace,
                                                                     attributes)])) from exc
    missing = {name: attributes[name] for name, s in state.items() if s == "missing"}
    if not missing:
        return state
    try:
        await client.operator_service.add_search_attributes(AddSearchAttributesRequest(
            namespace=client.namespace,
            search_attributes={name: KINDS[kind] for name, kind in missing.items()}))
    except RPCError as exc:
        if _denied(exc):
            raise OperatorDeniedError("\n".join([
                f"the server refused to add search attributes to namespace "
                f"{client.namespace!r} ({exc.status.name}: {exc.message})",
                *cloud_steps(client.namespace, missing)])) from exc
        if exc.status != RPCStatusCode.ALREADY_EXISTS:  # another setup raced us: re-check
            raise SetupError(f"cannot add search attributes {', '.join(missing)} to namespace "
                             f"{client.namespace!r}: {exc.message}") from exc
    after = await check_search_attributes(client, attributes)
    still = [name for name, s in after.items() if s == "missing"]
    if still:
        raise SetupError(f"added search attributes {', '.join(missing)} to namespace "
                         f"{client.namespace!r}, but it does not list {', '.join(still)}")
    return {name: "added" if name in missing else "present" for name in attributes}


async def retention(client: Any) -> timedelta | None:
    """The namespace's retention of closed executions (None when unset)."""
    from temporalio.api.workflowservice.v1 import DescribeNamespaceRequest

    response = await client.workflow_service.describe_namespace(
        DescribeNamespaceRequest(namespace=client.namespace))
    if not response.config.HasField("workflow_execution_retention_ttl"):
        return None
    ttl: timedelta = response.config.workflow_execution_retention_ttl.ToTimedelta()
    return ttl or None


async def set_retention(client: Any, days: float) -> timedelta | None:
    """Set the namespace's retention to `days`; returns it as the server now reports it.

    Raises:
        OperatorDeniedError: these credentials may not update the namespace (Temporal
            Cloud); the message gives the tcld and Cloud UI steps.
    """
    from google.protobuf.duration_pb2 import Duration
    from temporalio.api.namespace.v1 import NamespaceConfig
    from temporalio.api.workflowservice.v1 import UpdateNamespaceRequest

    if days <= 0:
        raise ValueError(f"retention must be a positive number of days, not {days!r}")
    ttl = Duration()
    ttl.FromTimedelta(timedelta(days=days))
    try:
        await client.workflow_service.update_namespace(UpdateNamespaceRequest(
            namespace=client.namespace,
            config=NamespaceConfig(workflow_execution_retention_ttl=ttl)))
    except RPCError as exc:
        if _denied(exc):
            ns = client.namespace
            raise OperatorDeniedError("\n".join([
                f"the server refused to update the retention of namespace {ns!r} "
                f"({exc.status.name}: {exc.message})",
                "On Temporal Cloud, set it as an account or namespace admin, either:",
                f"  tcld namespace retention set --namespace {ns} --retention-days {days:g}",
                f"or in the Cloud UI: Namespaces -> {ns} -> Edit -> Retention period."])
            ) from exc
        raise SetupError(f"cannot set the retention of namespace {client.namespace!r}: "
                         f"{exc.message}") from exc
    return await retention(client)


def format_retention(ttl: timedelta | None) -> str:
    """`30 days`, `1 day`, `12 hours`, or `not set`."""
    if ttl is None:
        return "not set"
    if ttl % timedelta(days=1) == timedelta(0):
        days = ttl // timedelta(days=1)
        return f"{days} day{'s' if days != 1 else ''}"
    hours = ttl / timedelta(hours=1)
    return f"{hours:g} hour{'s' if hours != 1 else ''}"
