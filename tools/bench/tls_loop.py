#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The load of benchmark 10 (names bound to TLS): TCP connect + TLS handshake + close,
in a loop for --seconds, with the SNI --name, to --addr:443. Prints one JSON object:
{"handshakes": N, "seconds": S, "rate": N/S, "errors": E}. Certificates are not
verified (the bench's own self-signed one); the handshake is complete either way."""
import argparse
import json
import socket
import ssl
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--addr", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--port", type=int, default=443)
    p.add_argument("--seconds", type=float, default=2.0)
    args = p.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    done = errors = 0
    start = time.monotonic()
    end = start + args.seconds
    while time.monotonic() < end:
        try:
            with socket.create_connection((args.addr, args.port), timeout=5) as s:
                with ctx.wrap_socket(s, server_hostname=args.name):
                    done += 1
        except OSError:
            errors += 1
            if errors > 10 and not done:
                break
    took = time.monotonic() - start
    print(json.dumps({"handshakes": done, "seconds": round(took, 3),
                      "rate": done / took if took else 0, "errors": errors}))


if __name__ == "__main__":
    main()
