"""The events feed and the webhook endpoints: routes and wire structs."""
