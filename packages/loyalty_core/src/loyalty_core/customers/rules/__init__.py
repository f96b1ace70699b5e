"""The customers area's pure rules: loyalty card codes and identifier values (``cards``), marketing
consent (``consent``)."""
