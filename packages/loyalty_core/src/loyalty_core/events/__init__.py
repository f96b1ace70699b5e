"""Events and webhooks: every change a shop's other systems care about, recorded in the transaction
that makes it (``services.recording``), the endpoints that receive them (``services.endpoints``), the
delivery log and its schedule (``jobs``), and which addresses a webhook may reach
(``rules.addresses``)."""
