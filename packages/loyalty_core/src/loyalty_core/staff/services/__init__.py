"""The staff area's services: the shop's users (``users``), server-side portal sessions and signing
in (``sessions``), the sign-in lockout (``lockout``) and password hashing (``passwords``)."""
