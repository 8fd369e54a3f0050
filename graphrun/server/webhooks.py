"""Webhooks as LangGraph's server sends them, under langgraph.json's `webhooks`.

A run's (or a cron's) `webhook` is checked here when the run is created: its URL must
satisfy the policy (`webhooks.url`), or the request is a 422 naming why. The finished
run is POSTed by the thread's workflow (the `send_webhook` activity, on a worker), with
the configured `headers` and only the `allowed_fields`. Header values may hold
`${{ env.VAR }}` templates, VAR starting with `env_prefix` (default `LG_WEBHOOK_`): the
run carries the templates, never the secrets, and the worker that sends the webhook
fills them in from its own environment.

LangGraph's defaults hold without a `webhooks` key too: loopback targets (localhost,
127.0.0.0/8, ::1, host.docker.internal) are refused unless `url.disable_loopback` is
false, and link-local addresses (cloud metadata endpoints) always.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

# What a webhook's body may be limited to (LangGraph's names).
FIELDS = frozenset({"run_id", "thread_id", "assistant_id", "created_at", "updated_at",
                    "metadata", "kwargs", "multitask_strategy", "status", "run_started_at",
                    "run_ended_at", "webhook_sent_at", "values", "error"})
URL_KEYS = frozenset({"require_https", "allowed_domains", "allowed_ports", "max_url_length",
                      "disable_loopback", "disable_private_ips"})
KEYS = frozenset({"env_prefix", "url", "headers", "allowed_fields"})
LOOPBACK_HOSTS = frozenset({"localhost", "localhost.localdomain", "host.docker.internal"})
TEMPLATE = re.compile(r"\$\{\{\s*([^}]+?)\s*\}\}")


@dataclass(frozen=True)
class WebhookPolicy:
    """langgraph.json's `webhooks` (defaults as LangGraph's server has them)."""

    require_https: bool = False
    allowed_domains: tuple[str, ...] = ()  # exact hosts, or "*.example.com" (subdomains)
    allowed_ports: tuple[int, ...] = ()
    max_url_length: int = 4096
    disable_loopback: bool = True
    disable_private_ips: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)  # values may hold templates
    env_prefix: str = "LG_WEBHOOK_"
    allowed_fields: tuple[str, ...] | None = None

    @classmethod
    def from_config(cls, webhooks: Any) -> WebhookPolicy:
        """The policy of langgraph.json's `webhooks`; ValueError naming a bad value. The
        header templates are checked against this process's environment, as LangGraph's
        server checks them at start."""
        if webhooks is None:
            return cls()
        if not isinstance(webhooks, dict):
            raise ValueError("webhooks must be an object")
        if unknown := set(webhooks) - KEYS:
            raise ValueError(f"webhooks: unknown keys {sorted(unknown)}")
        url = webhooks.get("url") or {}
        if not isinstance(url, dict) or (unknown := set(url) - URL_KEYS):
            raise ValueError(f"webhooks.url must be an object of {sorted(URL_KEYS)}")
        domains = url.get("allowed_domains", [])
        if not isinstance(domains, list) or not all(isinstance(d, str) and d for d in domains):
            raise ValueError("webhooks.url.allowed_domains must be a list of host names")
        if any("*" in d and not (d.startswith("*.") and "*" not in d[2:]) for d in domains):
            raise ValueError("webhooks.url.allowed_domains: a wildcard only as '*.domain'")
        ports = url.get("allowed_ports", [])
        if not isinstance(ports, list) or not all(
                isinstance(p, int) and 0 < p < 65536 for p in ports):
            raise ValueError("webhooks.url.allowed_ports must be a list of port numbers")
        fields = webhooks.get("allowed_fields")
        if fields is not None and (not isinstance(fields, list)
                                   or not set(fields) <= FIELDS):
            raise ValueError(f"webhooks.allowed_fields must be a list of {sorted(FIELDS)}")
        headers = webhooks.get("headers") or {}
        if not isinstance(headers, dict) or not all(
                isinstance(v, str) for v in headers.values()):
            raise ValueError("webhooks.headers must map header names to strings")
        prefix = webhooks.get("env_prefix", "LG_WEBHOOK_")
        if not isinstance(prefix, str):
            raise ValueError("webhooks.env_prefix must be a string")
        policy = cls(
            require_https=bool(url.get("require_https", False)),
            allowed_domains=tuple(d.lower() for d in domains), allowed_ports=tuple(ports),
            max_url_length=int(url.get("max_url_length", 4096)),
            disable_loopback=bool(url.get("disable_loopback", True)),
            disable_private_ips=bool(url.get("disable_private_ips", False)),
            headers=dict(headers), env_prefix=prefix,
            allowed_fields=None if fields is None else tuple(fields))
        render_headers(policy.headers, policy.env_prefix, os.environ)  # fails early
        return policy

    async def check(self, url: str) -> None:
        """Refuse (ValueError) a webhook URL the policy does not allow."""
        if len(url) > self.max_url_length:
            raise ValueError(f"webhook: the URL is longer than {self.max_url_length}")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"webhook must be an absolute http(s) URL, not {url!r:.80}.")
        if self.require_https and parts.scheme != "https":
            raise ValueError("webhook: an https URL is required (webhooks.url.require_https)")
        host = parts.hostname.lower()
        if self.allowed_domains and not any(
                host == d or (d.startswith("*.") and host.endswith(d[1:]))
                for d in self.allowed_domains):
            raise ValueError(f"webhook: {host!r} is not in webhooks.url.allowed_domains")
        try:
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            raise ValueError(f"webhook: a bad port in {url!r:.80}") from None
        if self.allowed_ports and port not in self.allowed_ports:
            raise ValueError(f"webhook: port {port} is not in webhooks.url.allowed_ports")
        if self.disable_loopback and host in LOOPBACK_HOSTS:
            raise ValueError(_LOOPBACK)
        for address in await _addresses(host, port):
            if address.is_loopback and self.disable_loopback:
                raise ValueError(_LOOPBACK)
            if address.is_link_local or address.is_multicast or address.is_unspecified:
                raise ValueError(f"webhook: {host!r} is a link-local or reserved address")
            if (self.disable_private_ips and address.is_private
                    and not address.is_loopback):
                raise ValueError(f"webhook: {host!r} is a private address "
                                 f"(webhooks.url.disable_private_ips)")

    def sent_with(self) -> dict[str, Any]:
        """What a run carries for its webhook: the header templates, their env prefix and
        the fields to send (the `send_webhook` activity applies them)."""
        if not self.headers and self.allowed_fields is None:
            return {}
        return {"headers": dict(self.headers), "env_prefix": self.env_prefix,
                "allowed_fields": None if self.allowed_fields is None
                else list(self.allowed_fields)}


_LOOPBACK = ("webhook: loopback targets (localhost, 127.0.0.0/8, ::1) are refused; set "
             "webhooks.url.disable_loopback to false in langgraph.json to allow them")


async def _addresses(host: str, port: int) -> list[Any]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port,
                                                             type=socket.SOCK_STREAM)
    except OSError:
        raise ValueError(f"webhook: {host!r} does not resolve") from None
    return [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]


def render_headers(headers: Mapping[str, str], prefix: str,
                   env: Mapping[str, str]) -> dict[str, str]:
    """Header values with their `${{ env.VAR }}` templates filled in from `env`; a
    ValueError names a template that is not allowed or a variable that is missing."""
    def fill(m: re.Match[str]) -> str:
        expr = m.group(1).strip()
        var = expr[len("env."):] if expr.startswith("env.") else ""
        if not var or "." in var:
            raise ValueError(f"webhooks.headers: only ${{{{ env.{prefix}NAME }}}} templates, "
                             f"not {expr!r}")
        if prefix and not var.startswith(prefix):
            raise ValueError(f"webhooks.headers: {var!r} does not start with the env_prefix "
                             f"{prefix!r}")
        if var not in env:
            raise ValueError(f"webhooks.headers: the environment has no {var}")
        return env[var]

    return {str(k): TEMPLATE.sub(fill, v) for k, v in headers.items()}
