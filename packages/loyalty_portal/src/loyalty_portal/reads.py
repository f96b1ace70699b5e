"""The few reads the portal's pages need that no core service answers yet, over core's models and
always scoped by the signed-in user's shop."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import and_, func, or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.customers.models import Customer, CustomerIdentifier, CustomerStatus
from loyalty_core.passes.models import EmailSuppression, SuppressionRelease
from loyalty_core.redemptions.errors import RedemptionNotFound
from loyalty_core.redemptions.models import Redemption
from loyalty_core.rewards.errors import RewardNotFound
from loyalty_core.rewards.models import Reward
from loyalty_core.staff.models import User


async def rewards(db: AsyncSession, vendor_id: int) -> Sequence[Reward]:
    """Every reward of the shop, whatever its status, newest first (deleted ones are gone)."""
    found = await db.scalars(
        select(Reward).where(Reward.vendor_id == vendor_id, Reward.deleted_at.is_(None)).order_by(Reward.id.desc())
    )
    return found.all()


async def reward(db: AsyncSession, vendor_id: int, reward_id: int) -> Reward:
    found = await db.scalar(
        select(Reward).where(Reward.vendor_id == vendor_id, Reward.id == reward_id, Reward.deleted_at.is_(None))
    )
    if found is None:
        raise RewardNotFound("The shop has no reward with this id.", reward_id=reward_id)
    return found


async def redemption(db: AsyncSession, vendor_id: int, code: str) -> Redemption:
    found = await db.scalar(
        select(Redemption).where(
            Redemption.vendor_id == vendor_id, Redemption.confirmation_code == code.strip().upper()
        )
    )
    if found is None:
        raise RedemptionNotFound("The shop has no redemption with this code.", code=code)
    return found


def _suppressed(vendor_id: int) -> Any:
    """The shop's customers' addresses on the suppression list that the shop has not switched on."""
    released = select(SuppressionRelease.id).where(
        SuppressionRelease.vendor_id == vendor_id, SuppressionRelease.email == EmailSuppression.email
    )
    return (
        select(EmailSuppression.email, EmailSuppression.reason, EmailSuppression.updated_at)
        .join(
            Customer,
            and_(
                Customer.vendor_id == vendor_id,
                func.lower(Customer.email) == EmailSuppression.email,
                Customer.status != CustomerStatus.ANONYMIZED,
            ),
        )
        .where(~released.exists())
        .distinct()
    )


async def suppressed(db: AsyncSession, vendor_id: int) -> Sequence[Any]:
    rows = await db.execute(_suppressed(vendor_id).order_by(EmailSuppression.email))
    return rows.all()


async def is_suppressed_for(db: AsyncSession, vendor_id: int, email: str) -> bool:
    query = _suppressed(vendor_id).where(EmailSuppression.email == email.strip().lower())
    return (await db.execute(query)).first() is not None


async def search_customers(db: AsyncSession, vendor_id: int, q: str, *, limit: int = 50) -> Sequence[Customer]:
    """A card code, email or external id exactly, or a part of a name; without ``q`` the newest."""
    term = q.strip()
    query = select(Customer).where(Customer.vendor_id == vendor_id, Customer.status != CustomerStatus.ANONYMIZED)
    if term:
        pattern = "%" + term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        carded = select(CustomerIdentifier.customer_id).where(
            CustomerIdentifier.vendor_id == vendor_id, CustomerIdentifier.value == term.upper()
        )
        query = query.where(
            or_(
                Customer.id.in_(carded),
                func.lower(Customer.email) == term.lower(),
                Customer.external_id == term,
                func.concat_ws(" ", Customer.first_name, Customer.last_name).ilike(pattern),
            )
        )
    found = await db.scalars(query.order_by(Customer.id.desc()).limit(limit))
    return found.all()


async def customer_redemptions(db: AsyncSession, vendor_id: int, customer_id: int) -> Sequence[Redemption]:
    found = await db.scalars(
        select(Redemption)
        .where(Redemption.vendor_id == vendor_id, Redemption.customer_id == customer_id)
        .order_by(Redemption.id.desc())
        .limit(50)
    )
    return found.all()


async def user_emails(db: AsyncSession, user_ids: set[int]) -> dict[int, str]:
    """The emails of the given users, by id (who made a card batch)."""
    if not user_ids:
        return {}
    found = await db.execute(select(User.id, User.email).where(User.id.in_(user_ids)))
    return {user_id: email for user_id, email in found.all()}
