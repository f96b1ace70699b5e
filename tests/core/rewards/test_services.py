"""RewardService: a free-product reward from a product and the admin delete (REWARD-1 to
REWARD-4, REWARD-7)."""

from __future__ import annotations

from datetime import date

import pytest
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.catalogue.errors import ProductNotFound
from loyalty_core.catalogue.services import ProductData, ProductService
from loyalty_core.clock import FixedClock
from loyalty_core.errors import IdempotencyKeyConflict, ValidationFailed
from loyalty_core.rewards.errors import RewardNotFound
from loyalty_core.rewards.models import Reward
from loyalty_core.rewards.services import FreeProductTerms, RewardService
from loyalty_core.tenancy.errors import VendorNotFound
from loyalty_core.tenancy.models import Vendor
from tests.support.vendors import make_vendor


async def with_product(db: AsyncSession, clock: FixedClock, vendor: Vendor, external_id: str = "SKU-1") -> int:
    data = ProductData(external_id, "Espresso", description="Strong", image_url="https://img.example/e.png")
    return (await ProductService(db, clock).create(vendor.id, data)).id


async def test_reward_takes_the_products_name_description_and_reference(db: AsyncSession, clock: FixedClock) -> None:
    """REWARD-1: name and description default to the product's; product_reference
    is its external_id; no stock limit is unlimited."""
    vendor = await make_vendor(db)
    product_id = await with_product(db, clock, vendor)
    made = await RewardService(db, clock).create_from_product(vendor.id, "SKU-1", FreeProductTerms(point_cost=100))
    reward = made.reward
    assert not made.replayed
    assert (reward.type, reward.name, reward.description) == ("free_product", "Espresso", "Strong")
    assert (reward.product_id, reward.product_reference, reward.image_url) == (
        product_id,
        "SKU-1",
        "https://img.example/e.png",
    )
    assert (reward.total_stock, reward.remaining_stock, reward.payment_amount, reward.status) == (
        None,
        None,
        0,
        "active",
    )
    assert (reward.discount_type, reward.discount_value, reward.idempotency_key) == (None, None, None)


async def test_overrides_and_stock(db: AsyncSession, clock: FixedClock) -> None:
    vendor = await make_vendor(db)
    await with_product(db, clock, vendor)
    terms = FreeProductTerms(
        point_cost=5,
        name="Free espresso",
        description="",
        total_stock=3,
        status="inactive",
        available_from=date(2026, 3, 1),
        available_until=date(2026, 3, 1),
        code_valid_for_hours=87600,
        payment_amount=50,
        max_redemptions_per_customer=1,
    )
    reward = (await RewardService(db, clock).create_from_product(vendor.id, "SKU-1", terms)).reward
    assert (reward.name, reward.description, reward.total_stock, reward.remaining_stock) == ("Free espresso", "", 3, 3)
    assert (reward.status, reward.payment_amount, reward.code_valid_for_hours) == ("inactive", 50, 87600)


async def test_window_must_not_end_before_it_starts(db: AsyncSession, clock: FixedClock) -> None:
    """REWARD-7: available_until is on or after available_from."""
    vendor = await make_vendor(db)
    await with_product(db, clock, vendor)
    terms = FreeProductTerms(point_cost=5, available_from=date(2026, 3, 2), available_until=date(2026, 3, 1))
    with pytest.raises(ValidationFailed) as refused:
        await RewardService(db, clock).create_from_product(vendor.id, "SKU-1", terms)
    assert list(refused.value.fields) == ["available_until"]


async def test_idempotency_rules(db: AsyncSession, clock: FixedClock) -> None:
    """REWARD-2: replays, conflicts and calls without a key."""
    vendor = await make_vendor(db)
    await with_product(db, clock, vendor)
    await with_product(db, clock, vendor, "SKU-2")
    service = RewardService(db, clock)
    first = await service.create_from_product(vendor.id, "SKU-1", FreeProductTerms(point_cost=5, idempotency_key="k"))
    replay = await service.create_from_product(
        vendor.id, "SKU-1", FreeProductTerms(point_cost=5, idempotency_key="k", name="other", total_stock=9)
    )
    assert replay.replayed
    assert replay.reward.id == first.reward.id
    assert (replay.reward.name, replay.reward.total_stock) == ("Espresso", None)
    for other in (
        FreeProductTerms(point_cost=6, idempotency_key="k"),
        FreeProductTerms(point_cost=5, payment_amount=1, idempotency_key="k"),
    ):
        with pytest.raises(IdempotencyKeyConflict):
            await service.create_from_product(vendor.id, "SKU-1", other)
    with pytest.raises(IdempotencyKeyConflict):
        await service.create_from_product(vendor.id, "SKU-2", FreeProductTerms(point_cost=5, idempotency_key="k"))
    keyless = [await service.create_from_product(vendor.id, "SKU-1", FreeProductTerms(point_cost=5)) for _ in "ab"]
    assert keyless[0].reward.id != keyless[1].reward.id


async def test_replay_compares_with_the_request_not_the_edited_reward(db: AsyncSession, clock: FixedClock) -> None:
    """REWARD-2: the replay answers the reward as it is now; what it is compared on is the request."""
    vendor = await make_vendor(db)
    await with_product(db, clock, vendor)
    service = RewardService(db, clock)
    made = await service.create_from_product(vendor.id, "SKU-1", FreeProductTerms(point_cost=5, idempotency_key="k"))
    made.reward.point_cost = 7  # as a portal edit would
    await db.flush()
    replay = await service.create_from_product(vendor.id, "SKU-1", FreeProductTerms(point_cost=5, idempotency_key="k"))
    assert (replay.replayed, replay.reward.point_cost) == (True, 7)


async def test_deleted_reward_or_product_refuses_the_key(db: AsyncSession, clock: FixedClock) -> None:
    """REWARD-2, REWARD-3: a key whose reward was deleted conflicts; a retry after the product was
    deleted answers PRODUCT_NOT_FOUND. The reward made from a deleted product keeps its link."""
    vendor = await make_vendor(db)
    product_id = await with_product(db, clock, vendor)
    await with_product(db, clock, vendor, "SKU-2")
    service = RewardService(db, clock)
    kept = await service.create_from_product(vendor.id, "SKU-1", FreeProductTerms(point_cost=5, idempotency_key="a"))
    gone = await service.create_from_product(vendor.id, "SKU-2", FreeProductTerms(point_cost=5, idempotency_key="b"))
    await service.delete(vendor.id, gone.reward.id)
    with pytest.raises(IdempotencyKeyConflict):
        await service.create_from_product(vendor.id, "SKU-2", FreeProductTerms(point_cost=5, idempotency_key="b"))
    await ProductService(db, clock).delete(vendor.id, "SKU-1")
    with pytest.raises(ProductNotFound):
        await service.create_from_product(vendor.id, "SKU-1", FreeProductTerms(point_cost=5, idempotency_key="a"))
    reward = await db.get(Reward, kept.reward.id, populate_existing=True)
    assert reward is not None
    assert (reward.product_id, reward.deleted_at, reward.status) == (product_id, None, "active")


async def test_max_rewards_counts_active_undeleted_rewards(db: AsyncSession, clock: FixedClock) -> None:
    """REWARD-4: max_rewards counts active rewards; refusal is 422 VALIDATION_ERROR."""
    vendor = await make_vendor(db, max_rewards=1)
    await with_product(db, clock, vendor)
    service = RewardService(db, clock)
    first = await service.create_from_product(vendor.id, "SKU-1", FreeProductTerms(point_cost=5))
    with pytest.raises(ValidationFailed) as refused:
        await service.create_from_product(vendor.id, "SKU-1", FreeProductTerms(point_cost=5))
    assert list(refused.value.fields) == ["status"]
    inactive = FreeProductTerms(point_cost=5, status="inactive")
    assert (await service.create_from_product(vendor.id, "SKU-1", inactive)).reward.status == "inactive"
    await service.delete(vendor.id, first.reward.id)
    assert (await service.create_from_product(vendor.id, "SKU-1", FreeProductTerms(point_cost=5))).reward.id


async def test_delete_is_scoped_to_the_vendor(db: AsyncSession, clock: FixedClock) -> None:
    vendor_a, vendor_b = await make_vendor(db), await make_vendor(db)
    await with_product(db, clock, vendor_a)
    service = RewardService(db, clock)
    made = await service.create_from_product(vendor_a.id, "SKU-1", FreeProductTerms(point_cost=5))
    with pytest.raises(RewardNotFound):
        await service.delete(vendor_b.id, made.reward.id)
    with pytest.raises(VendorNotFound):
        await service.delete(10**12, made.reward.id)
    await service.delete(vendor_a.id, made.reward.id)
    with pytest.raises(RewardNotFound):
        await service.delete(vendor_a.id, made.reward.id)
