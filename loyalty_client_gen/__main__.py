"""``python -m loyalty_client_gen``: rewrite the client's generated modules from the committed document."""

from __future__ import annotations

import sys

from loyalty_client_gen.generate import write


def main() -> int:
    for path in write():
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
