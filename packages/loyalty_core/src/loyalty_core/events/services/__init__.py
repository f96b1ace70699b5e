"""The events area's writes: recording an event in its change's transaction (``recording``), the web
request's one transaction (``transaction``), a shop's webhook endpoints (``endpoints``) and the
scrubbing of an anonymized customer's events (``scrubbing``)."""
