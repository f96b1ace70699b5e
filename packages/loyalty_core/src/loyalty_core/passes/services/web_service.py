"""``PassWebService``: what platform_a's pass web service reads and writes (PASS-10 to PASS-12):
a pass by its type and serial, a device's registrations, and the serials updated since a tag."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from loyalty_core.clock import Clock
from loyalty_core.passes.models import PassRegistration, WalletPass
from loyalty_core.passes.rules import parse_serial, token_matches
from loyalty_core.passes.services.records import PassRecords

_P = WalletPass.__table__.c
_R = PassRegistration.__table__.c
MAX_TAG = 2**63 - 1


def parse_tag(text: str | None) -> int:
    """``passesUpdatedSince``: a tag this service handed out, else 0 (every registered pass)."""
    if text is None or not text.isdigit() or len(text) > 19:
        return 0
    return min(int(text), MAX_TAG)


class PassWebService:
    def __init__(self, session: AsyncSession, clock: Clock) -> None:
        self._session, self._clock = session, clock
        self.records = PassRecords(session, clock)

    async def find(self, pass_type_identifier: str, serial: str) -> WalletPass | None:
        """The pass of that serial signed under that pass type; None for any other (PASS-11)."""
        owner = parse_serial(serial)
        if owner is None:
            return None
        vendor_id, customer_id = owner
        return (
            await self._session.execute(
                select(WalletPass).where(
                    _P.vendor_id == vendor_id,
                    _P.customer_id == customer_id,
                    _P.serial == serial,
                    _P.pass_type_identifier == pass_type_identifier,
                )
            )
        ).scalar_one_or_none()

    @staticmethod
    def authorized(row: WalletPass, authorization: str | None) -> bool:
        return token_matches(authorization, row.token_hash)

    async def register(self, row: WalletPass, device_id: str, push_token: str) -> bool:
        """Register the device for the pass, or take its new push token; True when it was new. The
        device has the pass as it shows now, so it is pushed only for a later change."""
        now = self._clock.now()
        inserted = (
            await self._session.execute(
                insert(PassRegistration)
                .values(
                    vendor_id=row.vendor_id,
                    pass_id=row.id,
                    device_id=device_id,
                    push_token=push_token,
                    known_fingerprint=row.fingerprint,
                    attempts=0,
                    created_at=now,
                    updated_at=now,
                )
                .on_conflict_do_nothing(index_elements=["vendor_id", "pass_id", "device_id"])
                .returning(_R.id)
            )
        ).scalar_one_or_none()
        if inserted is not None:
            return True
        registration = (
            await self._session.execute(
                select(PassRegistration)
                .where(_R.vendor_id == row.vendor_id, _R.pass_id == row.id, _R.device_id == device_id)
                .with_for_update()
            )
        ).scalar_one()
        if registration.push_token != push_token:
            registration.push_token = push_token
            registration.updated_at = now
            await self._session.flush()
        return False

    async def unregister(self, row: WalletPass, device_id: str) -> None:
        registration = (
            await self._session.execute(
                select(PassRegistration).where(
                    _R.vendor_id == row.vendor_id, _R.pass_id == row.id, _R.device_id == device_id
                )
            )
        ).scalar_one_or_none()
        if registration is not None:
            await self._session.delete(registration)
            await self._session.flush()

    async def updated_since(
        self, device_id: str, pass_type_identifier: str, since: str | None
    ) -> tuple[list[str], str] | None:
        """PASS-12: the device's serials of that pass type changed strictly after the tag, with the
        newest tag among them; None when there are none."""
        tag = parse_tag(since)
        rows = (
            await self._session.execute(
                select(_P.serial, _P.change_tag)
                .join(PassRegistration, (_R.vendor_id == _P.vendor_id) & (_R.pass_id == _P.id))
                .where(
                    _R.device_id == device_id,
                    _P.pass_type_identifier == pass_type_identifier,
                    _P.change_tag > tag,
                )
                .order_by(_P.serial)
            )
        ).all()
        if not rows:
            return None
        return [serial for serial, _ in rows], str(max(change_tag for _, change_tag in rows))

    async def registrations(self, vendor_id: int) -> int:
        """How many devices are registered for the shop's passes (metrics)."""
        count = await self._session.scalar(
            select(func.count()).select_from(PassRegistration).where(_R.vendor_id == vendor_id)
        )
        return int(count or 0)
