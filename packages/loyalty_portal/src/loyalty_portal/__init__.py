"""The vendor portal: a shop's own people sign in and run their programme in server-rendered pages.

It is a Litestar app of its own over ``loyalty_core`` alone, which the service mounts at ``/portal``;
every action is a plain form, so every page works without JavaScript.
"""

from loyalty_portal.app import MOUNT_PATH, create_portal
from loyalty_portal.config import PortalConfig

__all__ = ["MOUNT_PATH", "PortalConfig", "create_portal"]
