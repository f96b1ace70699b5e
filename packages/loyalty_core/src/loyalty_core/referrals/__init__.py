"""Referrals: a vendor's programme, the code every customer of it can share, the referral a
registration with that code opens, and its completion on the referee's first qualifying purchase,
which pays both customers (REFERRAL-n in docs/rules.md)."""
