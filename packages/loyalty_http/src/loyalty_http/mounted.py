"""Every controller the service mounts, in one list: a new area adds its controllers here."""

from __future__ import annotations

from typing import Any

from loyalty_http.admin.tenancy import AdminTenancyController
from loyalty_http.admin.users import AdminUsersController
from loyalty_http.catalogue.controllers import ProductController
from loyalty_http.customers.admin import AdminCustomerReadsController, AdminCustomersController
from loyalty_http.customers.controllers import CustomerController, CustomerReferralsController, UnsubscribeController
from loyalty_http.earning.admin import AdminCampaignsController, AdminEarnRulesController
from loyalty_http.earning.controllers import CustomerTransactionsController, ReturnController, TransactionController
from loyalty_http.events.controllers import EventController, WebhookEndpointController
from loyalty_http.health.controllers import HealthController, MetricsController
from loyalty_http.mailings.admin import AdminMailingsController, AdminOutboxRawController
from loyalty_http.oauth.controllers import OAuthController, VersionedOAuthController
from loyalty_http.openapi.pages import AdminDocsController, PublicDocsController
from loyalty_http.passes.admin import AdminPassesController, AdminSuppressionsController, WalletPushStandInController
from loyalty_http.passes.controllers import SendCardByExternalIdController, WalletPassController
from loyalty_http.passes.web_service import PassWebServiceController
from loyalty_http.redemptions.admin import AdminRedemptionsController
from loyalty_http.redemptions.controllers import RedemptionController
from loyalty_http.referrals.admin import AdminReferralProgrammeController
from loyalty_http.rewards.admin import AdminRewardsController
from loyalty_http.rewards.controllers import RewardController
from loyalty_http.tiers.admin import AdminTiersController
from loyalty_http.tiers.controllers import TierController
from loyalty_http.vouchers.controllers import AdminVouchersController, VoucherController
from loyalty_http.wallet.admin import AdminWalletController
from loyalty_http.wallet.controllers import WalletController
from loyalty_http.wallet.liability import AdminLiabilityController

ROUTE_HANDLERS: list[Any] = [
    HealthController,
    MetricsController,
    OAuthController,
    VersionedOAuthController,
    AdminTenancyController,
    AdminUsersController,
    ProductController,
    AdminRewardsController,
    RewardController,
    RedemptionController,
    AdminRedemptionsController,
    AdminVouchersController,
    VoucherController,
    CustomerController,
    UnsubscribeController,
    AdminCustomersController,
    AdminCustomerReadsController,
    WalletController,
    TransactionController,
    ReturnController,
    CustomerTransactionsController,
    CustomerReferralsController,
    AdminWalletController,
    AdminLiabilityController,
    PublicDocsController,
    AdminDocsController,
    WalletPassController,
    AdminPassesController,
    SendCardByExternalIdController,
    AdminSuppressionsController,
    WalletPushStandInController,
    PassWebServiceController,
    AdminEarnRulesController,
    AdminCampaignsController,
    AdminTiersController,
    AdminReferralProgrammeController,
    TierController,
    AdminMailingsController,
    AdminOutboxRawController,
    EventController,
    WebhookEndpointController,
]
