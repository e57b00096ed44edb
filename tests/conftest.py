"""Shared test configuration: the hypothesis profiles.

``HYPOTHESIS_PROFILE`` picks one (``default`` when unset):

- ``default``: quick, for every run of the suite (tox's ``py3*`` environments, CI);
- ``long``: many more examples, for the ``fuzz-long`` tox environment.

Both have no deadline: the machines these run on are shared and noisy, and a slow
example is not a failing one. The ``too_slow`` health check is off for the same reason.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

for _name, _examples in (("default", 100), ("long", 5_000)):
    settings.register_profile(
        _name,
        max_examples=_examples,
        deadline=None,
        print_blob=True,
        suppress_health_check=[HealthCheck.too_slow],
    )

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
