"""Admin API of the passes area: a shop's platform identity (retry; scripting the stand-in in test
mode) and its pass branding (contract 2, 4 and 5 "Passes and card mail")."""

from __future__ import annotations

from litestar import Controller, get, post, put
from litestar.di import NamedDependency
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.passes.identities import IdentityRows, unavailable
from loyalty_core.passes.models import IdentityState
from loyalty_core.passes.ports import BrandingFacts
from loyalty_http.params import Cards, Config, KnownVendor, present
from loyalty_http.passes import schemas as s
from loyalty_http.route_options import reads
from loyalty_http.wire.envelope import Envelope
from loyalty_http.wire.errors import RouteNotFound

Db = NamedDependency[AsyncSession]
Clk = NamedDependency[Clock]


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
        """Test mode: set the stand-in's answer for this shop and ask it again now (contract 4, 5)."""
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
        self, known_vendor: KnownVendor, payload: NamedDependency[s.BrandingBody], cards: Cards
    ) -> Envelope[s.Branding]:
        return Envelope(_branding(await cards.set_branding(known_vendor, present(payload))))
