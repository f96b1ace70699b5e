"""The passes area's public routes: ``GET /api/v1/customers/{customer}/wallet-pass`` and both forms
of send-card (PASS-1 to PASS-5)."""

from __future__ import annotations

from typing import Any

from litestar import Controller, Request, Response, get, post
from litestar.di import NamedDependency
from litestar.params import FromPath
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.customers.errors import CustomerDeactivated, CustomerNotFound, ExternalIdNotFound
from loyalty_core.customers.reads.customer import CustomerView
from loyalty_core.passes.errors import (
    CardSendThrottled,
    CustomerEmailSuppressed,
    CustomerHasNoEmail,
    PlatformAWalletUnavailable,
)
from loyalty_core.passes.services.records import PassRecords
from loyalty_core.tenancy.rules.access import VendorContext
from loyalty_http.config import HttpConfig
from loyalty_http.params import Cards, Config, Sends, after_commit, customer_id_of, pass_maker_of
from loyalty_http.passes import schemas as s
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.paths import path_key, refuse_encoded_slash

PKPASS_MEDIA_TYPE = "application/vnd.apple.pkpass"
SEND_ERRORS = (
    CardSendThrottled,
    CustomerDeactivated,
    CustomerEmailSuppressed,
    CustomerHasNoEmail,
    "VALIDATION_ERROR",
)
Vendor = NamedDependency[VendorContext]


class WalletPassController(Controller):
    path = "/api/v1/customers/{customer:str}"

    @get(
        "/wallet-pass",
        opt=reads(
            query=s.WalletPassQuery,
            errors=(CustomerNotFound, CustomerDeactivated, PlatformAWalletUnavailable, "VALIDATION_ERROR"),
            files=(PKPASS_MEDIA_TYPE,),
        ),
    )
    async def wallet_pass(
        self,
        customer: FromPath[str],
        params: NamedDependency[s.WalletPassQuery],
        vendor: Vendor,
        cards: Cards,
        config: Config,
        db: NamedDependency[AsyncSession],
        clock: NamedDependency[Clock],
    ) -> Response[bytes] | Envelope[s.SaveUrl]:
        _, card = await cards.for_pass(vendor.vendor_id, customer_id_of(customer))
        pass_maker = pass_maker_of(config)
        if params.platform == "platform_b":
            # the object the link names is updated as the pass changes (PASS-16)
            await PassRecords(db, clock).keep(card, object_id=pass_maker.object_id(card))
            return Envelope(s.SaveUrl(save_url=pass_maker.save_url(card, clock.now())))
        data = await pass_maker.pkpass(db, clock, card)
        return Response(
            content=data,
            media_type=PKPASS_MEDIA_TYPE,
            headers={"Content-Disposition": f'attachment; filename="card-{card.card_code}.pkpass"'},
        )

    @post(
        "/send-card",
        opt=reads(body=s.SendCard, errors=(*SEND_ERRORS, CustomerNotFound)),
        status_code=202,
    )
    async def send_card(
        self,
        request: Request[Any, Any, Any],
        customer: FromPath[str],
        vendor: Vendor,
        sends: Sends,
        config: Config,
    ) -> Envelope[s.SendCardAccepted]:
        found = await sends.by_id(vendor.vendor_id, customer_id_of(customer))
        return await _accept(request, sends, config, found)


class SendCardByExternalIdController(Controller):
    path = "/api/v1/customers/by-external-id/{external_id:str}"

    @post(
        "/send-card",
        opt=reads(body=s.SendCard, errors=(*SEND_ERRORS, ExternalIdNotFound)),
        status_code=202,
        guards=[refuse_encoded_slash],
    )
    async def send_card_by_external_id(
        self,
        request: Request[Any, Any, Any],
        external_id: FromPath[str],
        vendor: Vendor,
        sends: Sends,
        config: Config,
    ) -> Envelope[s.SendCardAccepted]:
        found = await sends.by_external_id(vendor.vendor_id, path_key(external_id))
        return await _accept(request, sends, config, found)


async def _accept(
    request: Request[Any, Any, Any], sends: Sends, config: HttpConfig, customer: CustomerView
) -> Envelope[s.SendCardAccepted]:
    """Record the mail with the acceptance; the job is queued only once the request has committed."""
    mail = await sends.accept(customer, message_domain=config.mail_domain)
    enqueue = config.enqueue_card_mail
    if enqueue is not None:
        mail_id = mail.id

        async def queue_mail() -> None:
            await enqueue(mail_id)

        after_commit(request, queue_mail)
    return Envelope(s.SendCardAccepted(customer_id=customer.id, channel="email", queued=True))
