"""Admin API of campaign mail: mailings written, listed, read, edited, tested, sent and cancelled
(MAIL-2 to MAIL-15), and in test mode a sent campaign message exactly as sent (MAIL-18)."""

from __future__ import annotations

import re
from typing import Any

from litestar import Controller, Request, Response, get, patch, post
from litestar.di import NamedDependency
from litestar.params import FromPath
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.earning.errors import PlanFeatureUnavailable, PlanLimitExceeded
from loyalty_core.mailings.errors import MailingNotActive, MailingNotDraft, MailingNotFound
from loyalty_core.mailings.jobs import raw_message
from loyalty_core.mailings.services import Draft, MailingService
from loyalty_http.mailings import admin_schemas as s
from loyalty_http.params import Config, KnownVendor, after_commit
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.errors import RouteNotFound
from loyalty_http.wire.pagination import Page, page_number, paginate
from loyalty_http.wire.paths import parse_id

Mailings = NamedDependency[MailingService]
TEST_JOB = "campaign-mail-tests"
"""The job that sends waiting test copies at once (MAIL-11)."""
_FOUND = (MailingNotFound, PlanFeatureUnavailable)


def _mailing_id(raw: str) -> int:
    return parse_id(raw, MailingNotFound, "No mailing of the vendor has this id.", mailing_id=raw)


class AdminMailingsController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}/mailings"

    @post("/", opt=reads(auth="admin", body=s.MailingCreate, errors=(PlanFeatureUnavailable,)), status_code=201)
    async def create_mailing(
        self, payload: NamedDependency[s.MailingCreate], known_vendor: KnownVendor, mailings: Mailings
    ) -> Envelope[s.MailingShown]:
        view = await mailings.create(known_vendor, payload.subject, payload.body, payload.audience.criteria())
        return Envelope(s.MailingShown.of(view))

    @get("/", opt=reads(auth="admin", query=s.MailingListQuery))
    async def list_mailings(
        self,
        request: Request[Any, Any, Any],
        params: NamedDependency[s.MailingListQuery],
        known_vendor: KnownVendor,
        mailings: Mailings,
    ) -> Envelope[Page[s.MailingShown]]:
        page = page_number(request)
        found = await mailings.reads.mailings(known_vendor, page=page, per_page=params.per_page)
        items = [s.MailingShown.of(v) for v in found.items]
        return Envelope(paginate(request, items, total=found.total, page=page, per_page=params.per_page))

    @get("/{mailing_id:str}", opt=reads(auth="admin", errors=(MailingNotFound,)))
    async def get_mailing(
        self, mailing_id: FromPath[str], known_vendor: KnownVendor, mailings: Mailings
    ) -> Envelope[s.MailingShown]:
        return Envelope(s.MailingShown.of(await mailings.reads.get(known_vendor, _mailing_id(mailing_id))))

    @patch("/{mailing_id:str}", opt=reads(auth="admin", body=s.MailingPatch, errors=(*_FOUND, MailingNotDraft)))
    async def update_mailing(
        self,
        mailing_id: FromPath[str],
        payload: NamedDependency[s.MailingPatch],
        known_vendor: KnownVendor,
        mailings: Mailings,
    ) -> Envelope[s.MailingShown]:
        draft = Draft(
            subject=payload.subject if isinstance(payload.subject, str) else None,
            body=payload.body if isinstance(payload.body, str) else None,
            audience=payload.audience.criteria() if isinstance(payload.audience, s.MailingAudience) else None,
        )
        view = await mailings.update(known_vendor, _mailing_id(mailing_id), draft)
        return Envelope(s.MailingShown.of(view))

    @post("/{mailing_id:str}/test", opt=reads(auth="admin", body=s.MailingTest, errors=_FOUND), status_code=202)
    async def test_mailing(
        self,
        request: Request[Any, Any, Any],
        mailing_id: FromPath[str],
        payload: NamedDependency[s.MailingTest],
        known_vendor: KnownVendor,
        mailings: Mailings,
        config: Config,
    ) -> Envelope[s.MailingTestAccepted]:
        row_id = await mailings.test(known_vendor, _mailing_id(mailing_id), payload.email)
        job = config.jobs.get(TEST_JOB)
        if job is not None:

            async def send_now() -> None:
                await job()

            after_commit(request, send_now)
        return Envelope(s.MailingTestAccepted(id=row_id, email=payload.email))

    @post(
        "/{mailing_id:str}/send",
        opt=reads(auth="admin", body=s.MailingSend, errors=(*_FOUND, MailingNotDraft, PlanLimitExceeded)),
        status_code=202,
    )
    async def send_mailing(
        self,
        mailing_id: FromPath[str],
        payload: NamedDependency[s.MailingSend],
        known_vendor: KnownVendor,
        mailings: Mailings,
    ) -> Envelope[s.MailingShown]:
        view = await mailings.send(known_vendor, _mailing_id(mailing_id), payload.at)
        return Envelope(s.MailingShown.of(view))

    @post(
        "/{mailing_id:str}/cancel",
        opt=reads(auth="admin", errors=(*_FOUND, MailingNotActive)),
        status_code=200,
    )
    async def cancel_mailing(
        self, mailing_id: FromPath[str], known_vendor: KnownVendor, mailings: Mailings
    ) -> Envelope[s.MailingShown]:
        return Envelope(s.MailingShown.of(await mailings.cancel(known_vendor, _mailing_id(mailing_id))))


class AdminOutboxRawController(Controller):
    path = "/admin/v1/outbox"

    # outside test mode the path answers 404 ROUTE_NOT_FOUND (OPS-4)
    @get("/{message_id:str}/raw", opt=reads(auth="admin", errors=("ROUTE_NOT_FOUND", "NOT_FOUND")))
    async def raw_outbox_message(
        self, message_id: FromPath[str], config: Config, db: NamedDependency[AsyncSession]
    ) -> Response[bytes]:
        """Test mode: a sent campaign message exactly as it went (``message/rfc822``)."""
        if config.test_clock is None:
            raise RouteNotFound("No endpoint at this path.")
        raw = await raw_message(db, int(message_id)) if re.fullmatch("[0-9]{1,18}", message_id) else None
        if raw is None:
            raise RouteNotFound("No message has this id.")
        return Response(raw, media_type="message/rfc822")
