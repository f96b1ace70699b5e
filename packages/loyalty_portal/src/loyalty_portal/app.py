"""``create_portal(config)``: the portal as a Litestar app of its own, which the service mounts."""

from __future__ import annotations

from pathlib import Path

from litestar import Litestar
from litestar.di import Provide
from litestar.static_files import create_static_files_router

from loyalty_portal.access import (
    closing_the_session,
    guarding_state_changes,
    provide_db,
    provide_visitor,
    refuse_unreadable,
)
from loyalty_portal.config import PortalConfig
from loyalty_portal.once import claiming, settling
from loyalty_portal.pages.account_links import AccountLinksController
from loyalty_portal.pages.activity import ActivityController
from loyalty_portal.pages.billing import BillingController
from loyalty_portal.pages.branches import BranchesController
from loyalty_portal.pages.branding import BrandingController, ShopLogoController
from loyalty_portal.pages.campaigns import CampaignsController
from loyalty_portal.pages.cards import CardsController
from loyalty_portal.pages.clients import ClientsController
from loyalty_portal.pages.customer_actions import CustomerActionsController
from loyalty_portal.pages.customer_profile import CustomerProfileController
from loyalty_portal.pages.customers import CustomersController
from loyalty_portal.pages.dashboard import DashboardController
from loyalty_portal.pages.earn_rules import EarnRulesController
from loyalty_portal.pages.export import ExportController
from loyalty_portal.pages.imports import ImportController
from loyalty_portal.pages.login import LoginController
from loyalty_portal.pages.mail import MailController
from loyalty_portal.pages.mailings import MailingsController
from loyalty_portal.pages.redemptions import RedemptionsController
from loyalty_portal.pages.referrals import ReferralsController
from loyalty_portal.pages.reports import ReportsController
from loyalty_portal.pages.rewards import RewardsController
from loyalty_portal.pages.tiers import TiersController
from loyalty_portal.pages.two_factor import SignInCodeController, TwoFactorController
from loyalty_portal.pages.users import UsersController
from loyalty_portal.web import EXCEPTION_HANDLERS, MOUNT_PATH, add_security_headers

__all__ = ["CONTROLLERS", "MOUNT_PATH", "create_portal"]

CONTROLLERS = [
    LoginController,
    AccountLinksController,
    SignInCodeController,
    TwoFactorController,
    DashboardController,
    CustomersController,
    CustomerActionsController,
    CustomerProfileController,
    RewardsController,
    RedemptionsController,
    EarnRulesController,
    CampaignsController,
    MailingsController,
    BranchesController,
    ClientsController,
    UsersController,
    MailController,
    CardsController,
    BillingController,
    ReportsController,
    BrandingController,
    TiersController,
    ReferralsController,
    ExportController,
    ImportController,
    ActivityController,
    ShopLogoController,
]
STATIC = Path(__file__).parent / "static"
MAX_BODY_BYTES = 65_536
"""The portal's forms are a few fields; a larger body is refused before it is read."""


def create_portal(config: PortalConfig) -> Litestar:
    def provide_config() -> PortalConfig:
        return config

    return Litestar(
        route_handlers=[*CONTROLLERS, create_static_files_router(path="/static", directories=[STATIC])],
        dependencies={
            "config": Provide(provide_config, use_cache=True, sync_to_thread=False),
            "db": Provide(provide_db),
            "visitor": Provide(provide_visitor),
        },
        exception_handlers=EXCEPTION_HANDLERS,
        # every route, and one registered later, is behind these: a state-changing request without
        # the session's CSRF token never reaches its handler (PORTAL-3)
        guards=[refuse_unreadable, guarding_state_changes(config)],
        # then each one's form key is claimed before its handler writes and settled with its answer,
        # in the request's transaction (PORTAL-21)
        before_request=claiming(config),
        after_request=settling,
        middleware=[closing_the_session],
        request_max_body_size=MAX_BODY_BYTES,
        before_send=[add_security_headers],
        logging_config=None,
        openapi_config=None,
    )
