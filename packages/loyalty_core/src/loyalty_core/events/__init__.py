"""Events and webhooks: every change a shop's other systems care about, recorded in the transaction
that makes it (``recording``), the endpoints that receive them (``endpoints``), the delivery log
and its schedule (``deliveries``), and which addresses a webhook may reach (``addresses``)."""
