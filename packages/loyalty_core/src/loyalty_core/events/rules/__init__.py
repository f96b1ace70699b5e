"""The events area's rules: what a stored event's payload is and how each stored version reads
(``payloads``), and where a webhook may go (``addresses``)."""
