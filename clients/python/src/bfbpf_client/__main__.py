# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""``python3 -m bfbpf_client OP ...``: the same as the ``bfbpf-client`` command."""

from .client import main

main()
