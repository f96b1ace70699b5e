"""Tenancy resources as the API shows them inside other resources."""

from __future__ import annotations

import msgspec

from loyalty_core.tenancy.models import Branch


class BranchShown(msgspec.Struct):
    external_id: str
    name: str
    type: str

    @classmethod
    def from_model(cls, b: Branch) -> BranchShown:
        return cls(external_id=b.external_id, name=b.name, type=b.type)
