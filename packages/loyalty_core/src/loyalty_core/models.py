"""Every model of the domain, imported in one place so the metadata is complete for migrations."""

from __future__ import annotations

from loyalty_core.db import Base

__all__ = ["Base", "metadata"]

metadata = Base.metadata
