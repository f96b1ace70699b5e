"""``GET /api/v1/customers/{customer}/wallet-pass`` (spec: Endpoints > wallet-pass)."""

from __future__ import annotations

from litestar import Controller, Response, get
from litestar.di import NamedDependency
from litestar.params import FromPath
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.tenancy.access import VendorContext
from loyalty_http.params import Cards, Config, customer_id_of, pass_maker_of
from loyalty_http.passes import schemas as s
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope

PKPASS_MEDIA_TYPE = "application/vnd.apple.pkpass"


class WalletPassController(Controller):
    path = "/api/v1/customers/{customer:str}"

    @get("/wallet-pass", opt=reads(query=s.WalletPassQuery))
    async def wallet_pass(
        self,
        customer: FromPath[str],
        params: NamedDependency[s.WalletPassQuery],
        vendor: NamedDependency[VendorContext],
        cards: Cards,
        config: Config,
        db: NamedDependency[AsyncSession],
        clock: NamedDependency[Clock],
    ) -> Response[bytes] | Envelope[s.SaveUrl]:
        _, card = await cards.for_pass(vendor.vendor_id, customer_id_of(customer))
        pass_maker = pass_maker_of(config)
        if params.platform == "platform_b":
            return Envelope(s.SaveUrl(save_url=pass_maker.save_url(card, clock.now())))
        data = await pass_maker.pkpass(db, clock, card)
        return Response(
            content=data,
            media_type=PKPASS_MEDIA_TYPE,
            headers={"Content-Disposition": f'attachment; filename="card-{card.card_code}.pkpass"'},
        )
