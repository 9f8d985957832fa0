"""Where report verification runs: a thread of its own, off the event loop and off the one thread
that serves every synchronous view and database call (asgiref's thread-sensitive executor), so a
slow upload never stalls other requests or a live call."""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

# Verification is CPU-bound and holds the GIL: more threads would not finish sooner.
_EXECUTOR = ThreadPoolExecutor(max_workers=1, thread_name_prefix="lab-report-verifier")
# Uploads beyond this many waiting are refused at once rather than queued without bound.
MAX_WAITING = 4
_SLOTS = threading.BoundedSemaphore(MAX_WAITING)

P = ParamSpec("P")
T = TypeVar("T")


class VerifierBusy(Exception):
    """Too many reports are waiting to be verified; the caller should try again shortly."""


async def off_loop(func: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """func(*args, **kwargs) on the verifier thread; the slot frees when it ends, not when we stop
    waiting (a client that hangs up does not stop work that already started)."""
    if not _SLOTS.acquire(blocking=False):
        raise VerifierBusy(f"{MAX_WAITING} reports are already waiting to be checked")
    future: Future[T] = _EXECUTOR.submit(functools.partial(func, *args, **kwargs))
    future.add_done_callback(lambda _: _SLOTS.release())
    return await asyncio.wrap_future(future)
