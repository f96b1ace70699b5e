"""The back office's reads of who did what: ``people`` names a shop's users and the causers of its
ledger entries; ``activity`` lists what the shop's people, clients and service did, newest first."""

from loyalty_core.staff.reads.people import causer_names, user_emails

__all__ = ["causer_names", "user_emails"]
