"""Request ids: a valid client id is echoed, anything else is replaced (INPUT-2)."""

from __future__ import annotations

import os
import re
import time
from typing import Any

import structlog

_VALID = re.compile(rb"[A-Za-z0-9._-]{1,128}")


def pick_request_id(sent: bytes | None) -> str:
    if sent is not None and _VALID.fullmatch(sent):
        return sent.decode("ascii")
    return new_request_id()


def new_request_id() -> str:
    # secrets.token_hex(16) is this, through three Python frames of its own, on every request
    return os.urandom(16).hex()


def request_id_of(scope: Any) -> str:
    """The request's id, chosen once per request and bound to every log line it writes."""
    state = scope.setdefault("state", {})
    rid = state.get("request_id")
    if rid is None:
        state.setdefault("started", time.perf_counter())
        sent = None
        for name, value in scope.get("headers", ()):  # a loop: a generator is a Python call per resume
            if name == b"x-request-id":
                sent = value
                break
        rid = state["request_id"] = pick_request_id(sent) if sent is not None else new_request_id()
        structlog.contextvars.bind_contextvars(request_id=rid)
    return str(rid)
