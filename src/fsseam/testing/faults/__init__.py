"""Fault injection and request counting for tests of remote backends (shipped in the wheel).

A :class:`FaultPlan` makes the next N requests that match (method, a substring of the path,
a substring of the query) fail in one of these ways:

- an HTTP status (``"500"``, ``"503"``, ``"401"``, ``"403"``, ...): an error answer in the
  store's own format (``error_body``); the request never reaches the store;
- ``"reset"``: the store gets the headers and the first ``cut_after`` body bytes, then the
  connection is reset (RST, no answer): the store sees its body stream break;
- ``"lost"``: the store handles the request completely (a write lands), then the client's
  connection is reset instead of answering.

Two ways to put a plan in front of a store, both counting every request at the server side:
:func:`fault_proxy` (an HTTP proxy, for any server, such as fake-gcs-server) and
:meth:`FaultPlan.wsgi` (a WSGI middleware, for servers in this process, such as moto's
``ThreadedMotoServer``). :func:`counting_proxy` is a proxy without faults. Retries that
sleep between attempts can be sped up with :func:`shorten_sleeps`; retry *decisions* and
counts stay what the client library does.

Everything binds 127.0.0.1 on a free port and stops on exit.
"""

from ..proxy import ProxiedRequest, serve_http
from .plan import CutBody, ErrorBody, FaultPlan, PlannedFault, WsgiApp, abort
from .proxy import (
    CountingProxy,
    FaultProxy,
    counting_proxy,
    fault_proxy,
    serve_proxy,
)
from .sleeps import shorten_sleeps

__all__ = [
    "CountingProxy",
    "CutBody",
    "ErrorBody",
    "FaultPlan",
    "FaultProxy",
    "PlannedFault",
    "ProxiedRequest",
    "WsgiApp",
    "abort",
    "counting_proxy",
    "fault_proxy",
    "serve_http",
    "serve_proxy",
    "shorten_sleeps",
]
