"""The rows of the portal's customer imports (CUSTOMER-15); ``jobs.imports`` checks, queues and runs them."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from sqlalchemy import BigInteger, CheckConstraint, ForeignKey, Index, Integer, String, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from loyalty_core.db import Base, VendorRow, one_of, vendor_key


class ImportState(StrEnum):
    CHECKED = "checked"
    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"


class CustomerImport(VendorRow, Base):
    """One uploaded file: the dry run's counts, then the run's progress."""

    __tablename__ = "customer_imports"
    __table_args__ = (
        vendor_key("customer_imports"),
        CheckConstraint(one_of("state", ImportState), name="state_known"),
        Index("ix_customer_imports_state", "state", "updated_at"),
    )

    vendor_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("vendors.id"), primary_key=True)
    user_id: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    file_name: Mapped[str] = mapped_column(String(255))
    path: Mapped[str] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(16))
    rows_total: Mapped[int] = mapped_column(Integer)
    rows_accepted: Mapped[int] = mapped_column(Integer)
    rows_done: Mapped[int] = mapped_column(Integer, default=0)
    rows_created: Mapped[int] = mapped_column(Integer, default=0)
    rows_held: Mapped[int] = mapped_column(Integer, default=0)
    """Rows whose customer the shop holds already (an earlier run of the file): nothing written."""
    rows_refused: Mapped[int] = mapped_column(Integer, default=0)
    errors: Mapped[list[Any]] = mapped_column(JSONB, default=list)
    """Up to ``import_jobs.MAX_ERRORS`` ``{row, reason}``: the dry run's refusals, then the run's."""
