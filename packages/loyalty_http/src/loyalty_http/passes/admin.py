"""Admin API of the passes area: a shop's platform identity (retry; importing a real one; scripting
the stand-in in test mode), its pass branding, the email suppression list and, in test mode, the
outbox and the wallet push stand-in (PASS-3, PASS-5, PASS-14)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, delete, get, post, put
from litestar.di import NamedDependency
from litestar.params import FromPath
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.errors import ValidationFailed
from loyalty_core.mailings.reads import OutboxRow
from loyalty_core.mailings.reads import outbox as listed_outbox
from loyalty_core.passes.models import IdentityState
from loyalty_core.passes.services.identities import IdentityRows, unavailable
from loyalty_core.passes.services.outbox import SuppressionNotFound
from loyalty_core.passes.services.ports import BrandingFacts, PushOutcome, WalletPushes
from loyalty_http.config import HttpConfig
from loyalty_http.params import Cards, Clk, Config, Db, KnownVendor, Outboxes, given, pass_maker_of, present
from loyalty_http.passes import schemas as s
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.errors import RouteNotFound
from loyalty_http.wire.pagination import Page, page_number, paginate


async def _state(db: AsyncSession, clock: Clock, vendor_id: int) -> s.IdentityState:
    row = await IdentityRows(db, clock).get(vendor_id)
    state = row.state if row is not None else IdentityState.PENDING
    retry_after = None if state == IdentityState.ISSUED else unavailable(row, clock.now()).details["retry_after"]
    return s.IdentityState(vendor_id=vendor_id, state=state, retry_after=retry_after)  # type: ignore[arg-type]


def _branding(facts: BrandingFacts) -> s.Branding:
    return s.Branding(
        shop_name=facts.shop_name,
        background=facts.background,
        foreground=facts.foreground,
        label=facts.label,
        has_logo=facts.logo_png is not None,
        has_icon=facts.icon_png is not None,
    )


_IMAGES = (("logo_png", "logo"), ("icon_png", "icon"))


def _refuse_unshowable_images(fields: dict[str, Any], config: HttpConfig) -> None:
    """Each image must be one a wallet can show (a PNG that decodes, at most 1,024 pixels a side and
    512 KiB), judged by the service's pass maker with the rules it builds passes by, so that no pass
    or card mail of the shop can fail on it later; 422 on every such field and nothing stored. The
    maker is asked only when the body carries an image."""
    images = [(field, what, image) for field, what in _IMAGES if isinstance(image := fields.get(field), bytes)]
    if not images:
        return
    maker = pass_maker_of(config)
    problems = {
        field: [sentence]
        for field, what, image in images
        if (sentence := maker.image_problem(image, what=what)) is not None
    }
    if problems:
        raise ValidationFailed(next(iter(problems.values()))[0], problems)


class AdminPassesController(Controller):
    path = "/admin/v1/vendors/{vendor_id:str}"

    @get("/wallet-identity", opt=reads(auth="admin"))
    async def read_identity(self, known_vendor: KnownVendor, db: Db, clock: Clk) -> Envelope[s.IdentityState]:
        return Envelope(await _state(db, clock, known_vendor))

    @post("/wallet-identity/retry", opt=reads(auth="admin"), status_code=202)
    async def retry_identity(
        self, known_vendor: KnownVendor, db: Db, clock: Clk, config: Config
    ) -> Envelope[s.IdentityState]:
        """The team fixed a refused identity: ask the platform again now (always accepted)."""
        if config.passes is not None:  # an app composed without a platform has nobody to ask
            await config.passes.ask_identity(db, clock, known_vendor, force=True)
        return Envelope(await _state(db, clock, known_vendor))

    @put("/wallet-identity", opt=reads(auth="admin", body=s.IdentityScript))
    async def script_identity(
        self,
        known_vendor: KnownVendor,
        payload: NamedDependency[s.IdentityScript],
        db: Db,
        clock: Clk,
        config: Config,
    ) -> Envelope[s.IdentityState]:
        """Test mode: set the stand-in's answer for this shop and ask it again now (PASS-3)."""
        pass_maker = config.passes
        if (
            config.test_clock is None
            or pass_maker is None
            or not pass_maker.script_platform(known_vendor, payload.outcome)
        ):
            raise RouteNotFound("No endpoint at this path.")
        await pass_maker.ask_identity(db, clock, known_vendor, reset=True)
        return Envelope(await _state(db, clock, known_vendor))

    @get("/pass-branding", opt=reads(auth="admin"))
    async def read_branding(self, known_vendor: KnownVendor, cards: Cards) -> Envelope[s.Branding]:
        return Envelope(_branding(await cards.branding(known_vendor)))

    @put("/pass-branding", opt=reads(auth="admin", body=s.BrandingBody))
    async def set_branding(
        self, known_vendor: KnownVendor, payload: NamedDependency[s.BrandingBody], cards: Cards, config: Config
    ) -> Envelope[s.Branding]:
        fields = present(payload)
        _refuse_unshowable_images(fields, config)
        return Envelope(_branding(await cards.set_branding(known_vendor, fields)))

    @put("/wallet-identity/certificate", opt=reads(auth="admin", body=s.IdentityImport, errors=("VALIDATION_ERROR",)))
    async def import_identity(
        self,
        known_vendor: KnownVendor,
        payload: NamedDependency[s.IdentityImport],
        db: Db,
        clock: Clk,
        config: Config,
    ) -> Envelope[s.IdentityState]:
        """An operator's real platform_a identity replaces whatever the shop had (PASS-3); the key
        is stored sealed like an issued one."""
        await pass_maker_of(config).import_identity(
            db,
            clock,
            known_vendor,
            certificate=payload.certificate,
            key=payload.key,
            intermediate=payload.intermediate,
        )
        return Envelope(await _state(db, clock, known_vendor))

    @delete(
        "/email-suppressions/{email:str}",
        opt=reads(auth="admin", errors=(SuppressionNotFound,)),
        status_code=204,
    )
    async def release_suppression(self, known_vendor: KnownVendor, email: FromPath[str], outbox: Outboxes) -> None:
        """Switch card mail back on for this shop only; the address stays suppressed elsewhere."""
        await outbox.release(known_vendor, email)


class AdminSuppressionsController(Controller):
    path = "/admin/v1"

    @post("/email-suppressions", opt=reads(auth="admin", body=s.SuppressionCreate), status_code=201)
    async def suppress(
        self, payload: NamedDependency[s.SuppressionCreate], outbox: Outboxes
    ) -> Envelope[s.Suppression]:
        """The bounce feed: global across shops (PASS-5)."""
        row = await outbox.suppress(payload.email, payload.reason)
        return Envelope(
            s.Suppression(email=row.email, reason=row.reason, created_at=row.created_at, updated_at=row.updated_at)
        )

    @get("/email-suppressions", opt=reads(auth="admin", query=s.SuppressionQuery))
    async def list_suppressions(
        self, request: Request[Any, Any, Any], params: NamedDependency[s.SuppressionQuery], outbox: Outboxes
    ) -> Envelope[Page[s.Suppression]]:
        """The suppression list, newest first; ``email`` picks one address."""
        page = page_number(request)
        rows, total = await outbox.suppressions(email=given(params.email), page=page, per_page=params.per_page)
        items = [
            s.Suppression(email=r.email, reason=r.reason, created_at=r.created_at, updated_at=r.updated_at)
            for r in rows
        ]
        return Envelope(paginate(request, items, total=total, page=page, per_page=params.per_page))

    # outside test mode the path answers 404 ROUTE_NOT_FOUND (OPS-4), as its document says
    @get("/outbox", opt=reads(auth="admin", query=s.OutboxQuery, errors=("ROUTE_NOT_FOUND",)))
    async def list_outbox(
        self,
        request: Request[Any, Any, Any],
        params: NamedDependency[s.OutboxQuery],
        db: NamedDependency[AsyncSession],
        config: Config,
    ) -> Envelope[Page[s.OutboxItem]]:
        """Test mode: the mails sent or written, card mails and campaign messages, newest first (OPS-4,
        MAIL-18); ``status=failed`` lists the mails that ended failed instead."""
        if config.test_clock is None:
            raise RouteNotFound("No endpoint at this path.")
        page = page_number(request)
        failed = params.status == "failed"
        rows, total = await listed_outbox(db, page=page, per_page=params.per_page, failed=failed)
        items = [_outbox_item(row) for row in rows]
        return Envelope(paginate(request, items, total=total, page=page, per_page=params.per_page))


def _stand_in(config: HttpConfig) -> WalletPushes:
    """The wallet push stand-in; outside test mode its paths answer 404 ROUTE_NOT_FOUND (OPS-4)."""
    pushes = config.wallet_pushes
    if config.test_clock is None or pushes is None or pushes.recorded() is None:
        raise RouteNotFound("No endpoint at this path.")
    return pushes


class WalletPushStandInController(Controller):
    path = "/admin/v1/test"

    @get("/wallet-pushes", opt=reads(auth="admin", query=s.WalletPushQuery, errors=("ROUTE_NOT_FOUND",)))
    async def list_wallet_pushes(
        self, request: Request[Any, Any, Any], params: NamedDependency[s.WalletPushQuery], config: Config
    ) -> Envelope[Page[s.WalletPushAttempt]]:
        """Test mode: every push and platform_b object update the stand-in was told of, in the order
        sent (PASS-14)."""
        attempts = _stand_in(config).recorded() or []
        page, per_page = page_number(request), params.per_page
        items = [
            s.WalletPushAttempt(
                platform=a.platform.value,
                push_token=a.push_token,
                object_id=a.object_id,
                serial=a.serial,
                sent_at=a.sent_at,
                outcome=a.outcome.value,
            )
            for a in attempts[(page - 1) * per_page : page * per_page]
        ]
        return Envelope(paginate(request, items, total=len(attempts), page=page, per_page=per_page))

    @post(
        "/wallet-push-outcome",
        opt=reads(auth="admin", body=s.PushOutcomeScript, errors=("ROUTE_NOT_FOUND",)),
        status_code=204,
    )
    async def script_wallet_push(self, payload: NamedDependency[s.PushOutcomeScript], config: Config) -> None:
        """Test mode: the stand-in's answer to the next push or object update (PASS-15)."""
        _stand_in(config).script(PushOutcome(payload.outcome))


def _outbox_item(row: OutboxRow) -> s.OutboxItem:
    return s.OutboxItem(
        id=row.id,
        to=row.to,
        subject=row.subject,
        created_at=row.created_at,
        status=row.status,
        attachments=[s.Attachment(filename=a["filename"], content_type=a["content_type"]) for a in row.attachments],
    )
