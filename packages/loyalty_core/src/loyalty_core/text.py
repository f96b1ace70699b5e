"""Text shapes every area and the HTTP layer check the same way: an email address, undecodable bytes."""

from __future__ import annotations

import re

EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s.]+")
"""Something@domain.tld: enough to catch typing mistakes without refusing real addresses."""

SURROGATE = re.compile("[\udc80-\udcff]")
"""What bytes that were not UTF-8 become when decoded with ``surrogateescape``."""
