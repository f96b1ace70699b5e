"""What a handler may ask for by name, and the small helpers every area uses to read a request.

Dependencies: ``db`` (one session, one transaction per request), ``reader`` and ``writer`` (the same
connection as psycopg, for the till's prepared statements), ``clock``, ``vendor`` (the
authenticated vendor of a vendor route), ``known_vendor`` (the id of an admin path's vendor, which
exists), ``payload`` and ``params`` (the validated body and query), ``companion`` (the row of the
read that rode on the token check), ``config``, ``codec`` and
``limiter`` and ``purchases`` (built once per app), and the core services by area
(``tenancy``, ``products``, ``customers``, ``wallets``, ``rewards``), ready-made over ``db`` and
``clock``.

Helpers: numeric ids in paths (:func:`vendor_id_of`, :func:`customer_id_of`) and the fields a
body carried (:func:`given`, :func:`present`).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any, TypeVar

import msgspec
import structlog
from litestar import Request
from litestar.di import NamedDependency, Provide
from litestar.params import FromPath
from msgspec import UNSET
from psycopg import AsyncConnection as DriverConnection
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.accounts.reads.search import CustomerSearch
from loyalty_core.accounts.services import CustomerService
from loyalty_core.accounts.services.merge import MergeService
from loyalty_core.catalogue.services import ProductService
from loyalty_core.clock import Clock
from loyalty_core.customers.errors import CustomerNotFound
from loyalty_core.customers.reads.cards import CardList
from loyalty_core.earning.services import CampaignService, EarnRuleService
from loyalty_core.earning.till_purchase import Purchases
from loyalty_core.events.services.transaction import request_transaction
from loyalty_core.mailings.services import MailingService
from loyalty_core.passes.services.cards import PassCards
from loyalty_core.passes.services.outbox import Outbox
from loyalty_core.passes.services.ports import PassMaker
from loyalty_core.passes.services.sending import CardSends
from loyalty_core.redemptions.reads import RedemptionList
from loyalty_core.redemptions.services import PortalRedemptions
from loyalty_core.referrals.services import ProgrammeService
from loyalty_core.rewards.reads import RewardReads
from loyalty_core.rewards.services import RewardService, RewardWrites
from loyalty_core.tenancy.errors import VendorNotFound
from loyalty_core.tenancy.reads import TenancyReads
from loyalty_core.tenancy.rules.access import VendorContext
from loyalty_core.tenancy.services import TenancyService
from loyalty_core.tiers.services import TierService
from loyalty_core.usage import UsageReads
from loyalty_core.vouchers.reads import VoucherList
from loyalty_core.vouchers.services import VoucherService
from loyalty_core.wallet.services import WalletService
from loyalty_http.access.connection import request_connection
from loyalty_http.access.rate_limit import RateLimiter
from loyalty_http.access.tokens import TokenCodec
from loyalty_http.config import HttpConfig
from loyalty_http.wire.paths import parse_id

S = TypeVar("S")

Db = NamedDependency[AsyncSession]
Reader = NamedDependency[DriverConnection[Any]]
Writer = NamedDependency[DriverConnection[Any]]
Clk = NamedDependency[Clock]
Vendor = NamedDependency[VendorContext]
Companion = NamedDependency[dict[str, Any] | None]
Config = NamedDependency[HttpConfig]
Limiter = NamedDependency[RateLimiter]
Codec = NamedDependency[TokenCodec]

Tenancy = NamedDependency[TenancyService]
Products = NamedDependency[ProductService]
Customers = NamedDependency[CustomerService]
Wallets = NamedDependency[WalletService]
Merges = NamedDependency[MergeService]
Rewards = NamedDependency[RewardService]
RewardWriter = NamedDependency[RewardWrites]
PortalRedemptionsDep = NamedDependency[PortalRedemptions]
Vouchers = NamedDependency[VoucherService]
Cards = NamedDependency[PassCards]
Sends = NamedDependency[CardSends]
Outboxes = NamedDependency[Outbox]
KnownVendor = NamedDependency[int]
TenancyReadsDep = NamedDependency[TenancyReads]
UsageDep = NamedDependency[UsageReads]
CustomerSearchDep = NamedDependency[CustomerSearch]
CardListDep = NamedDependency[CardList]
RewardReadsDep = NamedDependency[RewardReads]
RedemptionListDep = NamedDependency[RedemptionList]
VoucherListDep = NamedDependency[VoucherList]


async def provide_db(request: Request[Any, Any, Any], config: Config) -> AsyncGenerator[AsyncSession, None]:
    """One session, one transaction per request, on the request's one connection (the token check's):
    committed when the handler returns, rolled back when it raises, so a refused request leaves
    nothing half-written."""
    enqueue = config.enqueue_webhooks

    async def on_events() -> None:
        if enqueue is not None:
            after_commit(request, enqueue)

    async with await request_connection(request.scope).session(config.sessionmaker) as session:
        async with request_transaction(session, on_events):
            yield session
        await _run_after_commit(request)


AFTER_COMMIT = "after_commit"
log = structlog.get_logger("loyalty.http")


def after_commit(request: Request[Any, Any, Any], action: Callable[[], Awaitable[None]]) -> None:
    """Run ``action`` once the request's transaction has committed (a mail job for a row the
    transaction wrote), never for a request that rolls back."""
    request.scope["state"].setdefault(AFTER_COMMIT, []).append(action)


async def _run_after_commit(request: Request[Any, Any, Any]) -> None:
    for action in request.scope["state"].pop(AFTER_COMMIT, []):
        try:
            await action()
        except Exception as exc:  # committed work is swept up later; the answer stands
            log.warning("after-commit action failed", error=type(exc).__name__)


async def wake_deliveries(config: HttpConfig, deliveries: int) -> None:
    """After a till's write committed on its own connection (no session, so not through
    :func:`provide_db`): wake the delivery worker when its events created ``deliveries`` pending
    deliveries (EVENT-7); a shop without endpoints costs nothing more."""
    if not deliveries or config.enqueue_webhooks is None:
        return
    try:
        await config.enqueue_webhooks()
    except Exception as exc:  # the sweep sends them a minute later; the committed answer stands
        log.warning("waking the webhook worker failed", error=type(exc).__name__)


async def provide_reader(request: Request[Any, Any, Any]) -> DriverConnection[Any]:
    """The request's connection in autocommit, for a till call that is one prepared statement."""
    return await request_connection(request.scope).reader()


async def provide_writer(request: Request[Any, Any, Any]) -> DriverConnection[Any]:
    """The request's connection for a till write that runs its own transaction on it, once the
    write has a place at its wallet's gate (``access.wallet_gate``): the wallet as the request names
    it, by the body's ``identifier`` or else by its path (a customer's adjustment, a purchase's return)."""
    state = request.scope["state"]
    named = getattr(state.get("payload"), "identifier", None)
    wallet = (state["principal"].vendor_id, named if isinstance(named, str) else request.scope["path"])
    return await request_connection(request.scope).writer(wallet)


def provide_clock(config: Config) -> Clock:
    return config.clock


def provide_payload(request: Request[Any, Any, Any]) -> Any:
    return request.scope["state"].get("payload")


def provide_params(request: Request[Any, Any, Any]) -> Any:
    return request.scope["state"].get("params")


def provide_companion(request: Request[Any, Any, Any]) -> Any:
    """The row of the route's companion read (``reads(companion=...)``), None when it found none."""
    return request.scope["state"]["companion_row"]


def provide_vendor(request: Request[Any, Any, Any]) -> Any:
    """The authenticated vendor context of a vendor route (a VendorContext)."""
    return request.scope["state"].get("principal")


async def provide_known_vendor(vendor_id: FromPath[str], tenancy: Tenancy) -> int:
    """The vendor of an admin path, refused with VENDOR_NOT_FOUND when no vendor has that id."""
    return (await tenancy.get_vendor(vendor_id_of(vendor_id))).id


def pass_maker_of(config: HttpConfig) -> PassMaker:
    """The service's pass maker, read after the request's own checks (so an app composed without
    one still answers every refusal as it should, and fails only where a pass is built or a shop image judged)."""
    if config.passes is None:
        raise RuntimeError("this app was composed without a pass maker")
    return config.passes


def dependencies(
    config: HttpConfig, codec: TokenCodec, limiter: RateLimiter, purchases: Purchases
) -> dict[str, Provide]:
    """The app-wide dependencies, over the objects the plugin built once."""

    def provide_config() -> HttpConfig:
        return config

    def provide_codec() -> TokenCodec:
        return codec

    def provide_limiter() -> RateLimiter:
        return limiter

    def provide_purchases() -> Purchases:
        return purchases

    return {
        "config": Provide(provide_config, use_cache=True, sync_to_thread=False),
        "codec": Provide(provide_codec, use_cache=True, sync_to_thread=False),
        "limiter": Provide(provide_limiter, use_cache=True, sync_to_thread=False),
        "purchases": Provide(provide_purchases, use_cache=True, sync_to_thread=False),
        "db": Provide(provide_db),
        "reader": Provide(provide_reader),
        "writer": Provide(provide_writer),
        "clock": Provide(provide_clock, sync_to_thread=False),
        "payload": Provide(provide_payload, sync_to_thread=False),
        "params": Provide(provide_params, sync_to_thread=False),
        "vendor": Provide(provide_vendor, sync_to_thread=False),
        "companion": Provide(provide_companion, sync_to_thread=False),
        "known_vendor": Provide(provide_known_vendor),
        # the core services, each over the request's session and clock: a new area adds its own
        "tenancy": service(TenancyService),
        "products": service(ProductService),
        "customers": service(CustomerService),
        "wallets": service(WalletService),
        "merges": service(MergeService),
        "rewards": service(RewardService),
        "reward_writes": service(RewardWrites),
        "portal_redemptions": service(PortalRedemptions),
        "vouchers": service(VoucherService),
        "cards": service(PassCards),
        "sends": service(CardSends),
        "outbox": service(Outbox),
        "earn_rules": service(EarnRuleService),
        "campaigns": service(CampaignService),
        "tiers": service(TierService),
        "referral_programmes": service(ProgrammeService),
        "mailings": service(MailingService),
        # the back office's reads
        "tenancy_reads": service(TenancyReads),
        "usage": service(UsageReads),
        "customer_search": service(CustomerSearch),
        "card_list": service(CardList),
        "reward_reads": service(RewardReads),
        "redemption_list": service(RedemptionList),
        "voucher_list": service(VoucherList),
    }


def service(cls: Callable[[AsyncSession, Clock], S]) -> Provide:
    """A core service over the request's session and clock."""

    def build(db: Db, clock: Clk) -> S:
        return cls(db, clock)

    return Provide(build, sync_to_thread=False)


def vendor_id_of(raw: str) -> int:
    """The vendor id of an admin path; one that is no whole number is a vendor that does not exist."""
    return parse_id(raw, VendorNotFound, "No vendor has this id.", vendor_id=raw)


def customer_id_of(raw: str) -> int:
    """A customer id in a path; one that is no whole number is a customer the vendor does not have."""
    return parse_id(raw, CustomerNotFound, "No customer of the vendor has this id.", customer_id=raw)


def given(value: Any) -> Any:
    """An optional body field's value, None when the body left it out."""
    return None if value is UNSET else value


def present(struct: msgspec.Struct, *, leaving: frozenset[str] = frozenset()) -> dict[str, Any]:
    """The fields a body carried (explicit nulls included), as a plain mapping, less ``leaving``."""
    return {f: v for f in struct.__struct_fields__ if f not in leaving and (v := getattr(struct, f)) is not UNSET}
