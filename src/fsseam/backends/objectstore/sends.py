"""How many times one call's HTTP request went out, for clients over aiohttp (s3fs, gcsfs).

A store library resends a request whose answer was lost at several levels: aiohttp itself
(an idempotent request, such as a DELETE, whose connection dropped before the answer),
botocore's and s3fs's retries, gcsfs's. A refusal (404, 412) that answered a resend may
have met our own earlier attempt, landed unanswered; one that answered the only request
sent is the store's definitive answer. So a call counts its sends, at the one place every
level goes through: the aiohttp session's "request headers sent" trace, once per request
put on the wire, including aiohttp's own hidden resend.

    if watch(session):             # the session counts for calls that ask
        with counting() as sends:
            ...                    # sends[0]: requests sent by this call (its task)

aiohttp is imported only when a session is watched.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["counting", "watch"]

_SENDS: ContextVar[list[int] | None] = ContextVar("fsseam_sends", default=None)
"""The requests sent so far by the call counting them; None outside such a call."""

_trace: Any = None
_lock = threading.Lock()
"""One trace for every session, attached once to each: a second would count twice."""


async def _sent(session: Any, ctx: Any, params: Any) -> None:
    # Called in the request's task, or a writer task made from it (a copy of its context
    # holding the same list).
    sends = _SENDS.get()
    if sends is not None:
        sends[0] += 1


def _counting_trace() -> Any:
    global _trace  # made once, on first use: aiohttp is imported only then
    if _trace is None:
        from aiohttp import TraceConfig

        trace = TraceConfig()
        trace.on_request_headers_sent.append(_sent)
        trace.freeze()
        _trace = trace
    return _trace


def watch(session: Any) -> bool:
    """Make ``session`` (an ``aiohttp.ClientSession``) count sends for the calls that ask
    (idempotent); False when it cannot be told to (not such a session): its calls' sends
    are then not known."""
    try:
        # Not documented by aiohttp, which takes trace configs only when a session is made;
        # the store library made this one.
        configs = session._trace_configs
    except AttributeError:
        return False
    if not isinstance(configs, list):
        return False
    with _lock:
        trace = _counting_trace()
        if not any(c is trace for c in configs):
            configs.append(trace)
    return True


@contextmanager
def counting() -> Iterator[list[int]]:
    """Count the requests the code inside sends (in this task and those made from it)."""
    sends = [0]
    token = _SENDS.set(sends)
    try:
        yield sends
    finally:
        _SENDS.reset(token)
