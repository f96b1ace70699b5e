"""Every model of the domain, imported in one place so the metadata is complete for migrations."""

from __future__ import annotations

from loyalty_core.db import Base
from loyalty_core.tenancy.models import ApiClient, Branch, IssuedToken, Plan, Vendor

__all__ = ["ApiClient", "Base", "Branch", "IssuedToken", "Plan", "Vendor", "metadata"]

metadata = Base.metadata
