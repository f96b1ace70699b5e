"""Every model of the domain, imported in one place so the metadata is complete for migrations."""

from __future__ import annotations

from loyalty_core.accounts.models import CustomerImport
from loyalty_core.catalogue.models import Product, ProductCount
from loyalty_core.customers.counts import customer_counts
from loyalty_core.customers.models import CardBatch, ConsentEvent, Customer, CustomerIdentifier
from loyalty_core.db import Base
from loyalty_core.earning.models import (
    PENDING_PURCHASES,
    RECENT_PURCHASES,
    Campaign,
    CustomerMoment,
    EarnRule,
    Transaction,
    TransactionItem,
    TransactionReturn,
    activity_days,
    customer_activity,
    meter_leases,
    meters,
)
from loyalty_core.events.models import WebhookDelivery, WebhookEndpoint, events
from loyalty_core.mailings.models import Mailing, MailingRecipient
from loyalty_core.passes.models import (
    CardMail,
    CardSendCooldown,
    EmailSuppression,
    PassBrandingRow,
    PassRegistration,
    SuppressionRelease,
    WalletIdentity,
    WalletPass,
)
from loyalty_core.redemptions.models import Redemption
from loyalty_core.referrals.models import Referral, ReferralProgramme, referral_payouts
from loyalty_core.rewards.models import Reward, RewardBranch
from loyalty_core.staff.models import (
    Invitation,
    PasswordReset,
    PortalActivity,
    PortalSession,
    RecoveryCode,
    SignInFailure,
    UsedFormKey,
    User,
)
from loyalty_core.tenancy.models import ApiClient, Branch, IssuedToken, Plan, Vendor
from loyalty_core.tiers.models import Tier, TierLadder, tier_months
from loyalty_core.vouchers.models import Voucher, VoucherBranch
from loyalty_core.wallet.branch_totals import branch_totals
from loyalty_core.wallet.models import (
    Wallet,
    ledger_totals,
    ledger_totals_monthly,
    ledger_totals_overall,
    ledger_totals_watermark,
)

__all__ = [
    "PENDING_PURCHASES",
    "RECENT_PURCHASES",
    "ApiClient",
    "Base",
    "Branch",
    "Campaign",
    "CardBatch",
    "CardMail",
    "CardSendCooldown",
    "ConsentEvent",
    "Customer",
    "CustomerIdentifier",
    "CustomerImport",
    "CustomerMoment",
    "EarnRule",
    "EmailSuppression",
    "Invitation",
    "IssuedToken",
    "Mailing",
    "MailingRecipient",
    "PassBrandingRow",
    "PassRegistration",
    "PasswordReset",
    "Plan",
    "PortalActivity",
    "PortalSession",
    "Product",
    "ProductCount",
    "RecoveryCode",
    "Redemption",
    "Referral",
    "ReferralProgramme",
    "Reward",
    "RewardBranch",
    "SignInFailure",
    "SuppressionRelease",
    "Tier",
    "TierLadder",
    "Transaction",
    "TransactionItem",
    "TransactionReturn",
    "UsedFormKey",
    "User",
    "Vendor",
    "Voucher",
    "VoucherBranch",
    "Wallet",
    "WalletIdentity",
    "WalletPass",
    "WebhookDelivery",
    "WebhookEndpoint",
    "activity_days",
    "branch_totals",
    "customer_activity",
    "customer_counts",
    "events",
    "ledger_totals",
    "ledger_totals_monthly",
    "ledger_totals_overall",
    "ledger_totals_watermark",
    "metadata",
    "meter_leases",
    "meters",
    "referral_payouts",
    "tier_months",
]

metadata = Base.metadata
