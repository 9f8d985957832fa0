"""Connections to a tenant's agent go only to addresses checked as each one is made.

A tenant's registered agent comes with `AgentSpec.resolve`: it answers the checked addresses of
the agent's host or raises AddressRefused. The connectors connect to what it answered, never to
what the name resolves to a moment later (DNS rebinding); TLS still verifies the URL's name.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import httpcore
import httpx

Resolve = Callable[[str, int], Sequence[str]]


class AddressRefused(OSError):
    """The agent's host resolves to an address the lab may not reach now, in words."""


async def checked_address(resolve: Resolve, host: str, port: int) -> str:
    """The first checked address of host (resolved off the event loop); AddressRefused else."""
    addresses = await asyncio.to_thread(resolve, host, port)
    if not addresses:
        raise AddressRefused(f"{host} resolves to no address")
    return addresses[0]


class _PinnedBackend(httpcore.AsyncNetworkBackend):
    def __init__(self, resolve: Resolve) -> None:
        self._resolve = resolve
        self._backend = httpcore.AnyIOBackend()

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        try:
            address = await checked_address(self._resolve, host, port)
        except OSError as error:
            raise httpcore.ConnectError(str(error)) from error
        return await self._backend.connect_tcp(
            address,
            port,
            timeout=timeout,
            local_address=local_address,
            socket_options=socket_options,
        )

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,  # noqa: ASYNC109 (httpcore's interface)
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.AsyncNetworkStream:
        raise httpcore.ConnectError("an agent is reached over TCP only")

    async def sleep(self, seconds: float) -> None:
        await self._backend.sleep(seconds)


def pinned_transport(resolve: Resolve) -> httpx.AsyncBaseTransport:
    """An httpx transport whose every new connection goes to an address resolve checked."""
    transport = httpx.AsyncHTTPTransport(trust_env=False)
    # httpx builds its pool without a way to name the network backend; this is that pool with one.
    transport._pool = httpcore.AsyncConnectionPool(
        ssl_context=httpx.create_ssl_context(), network_backend=_PinnedBackend(resolve)
    )
    return transport
