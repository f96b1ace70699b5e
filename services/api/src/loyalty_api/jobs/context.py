"""``JobContext``: what every job reads besides its own arguments, built once per worker.

SAQ hands each job a dict of its own (the worker, the job); the worker keeps one ``JobContext``
in it under ``CONTEXT_KEY``, and ``job_context`` reads it back, typed. The job bodies take the
``JobContext`` itself (``jobs.hook`` hands it over), so they read ``ctx.sessionmaker``, never a
string key.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from loyalty_api.adapters.mail_sender import Mailer
from loyalty_api.adapters.webhook_sender import Sender
from loyalty_api.jobs.webhook_gates import Gates
from loyalty_core.clock import Clock
from loyalty_core.events.services.endpoints import Sealer
from loyalty_core.passes.services.ports import PassMaker, WalletPushes

CONTEXT_KEY = "loyalty"
"""The one key of SAQ's context that the service uses."""

Part = TypeVar("Part")


@dataclass(frozen=True, kw_only=True, slots=True)
class JobContext:
    """The database and the clock every job uses, and what the sending jobs send with. The service's
    worker has every part; a context made for the jobs that send nothing (a test's, a benchmark's)
    may leave the sending parts out, and a job that needs one then fails at once (``needed``)."""

    sessionmaker: async_sessionmaker[AsyncSession]
    clock: Clock
    passes: PassMaker | None = None
    """The card mails' pass file and save link."""
    mailer: Mailer | None = None
    mail_from: str | None = None
    """The card mails' From address (``LOYALTY_MAIL_FROM``)."""
    unsubscribe_key: bytes | None = None
    """Signs the campaign messages' unsubscribe links (CONSENT-4)."""
    public_url: str = ""
    """``LOYALTY_PUBLIC_URL``: where the unsubscribe links point."""
    keep_raw: bool = False
    """Test mode: keep each campaign message as sent (``GET /admin/v1/outbox/{id}/raw``)."""
    webhook_sealer: Sealer | None = None
    """Opens the endpoints' signing secrets."""
    webhook_sender: Sender | None = None
    webhook_gates: Gates = field(default_factory=Gates)
    wallet_pushes: WalletPushes | None = None
    """Tells the wallet platforms of changed passes (test mode: the stand-in); None: nothing is told."""


def needed(part: Part | None, what: str) -> Part:
    """One of the sending parts, which the job reading it cannot go without."""
    if part is None:
        raise LookupError(f"the job context was made without {what}")
    return part


def job_context(ctx: Mapping[str, Any]) -> JobContext:
    """The ``JobContext`` in SAQ's context of a job."""
    context = ctx[CONTEXT_KEY]
    if not isinstance(context, JobContext):
        raise TypeError(f"SAQ's context holds {type(context).__name__} under {CONTEXT_KEY!r}, not a JobContext")
    return context


def keep(ctx: MutableMapping[str, Any], context: JobContext) -> None:
    """Put the worker's ``JobContext`` into SAQ's context, where ``job_context`` reads it."""
    ctx[CONTEXT_KEY] = context
