#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The load of benchmark 10 (names bound to TLS): TCP connect + TLS handshake + close,
in a loop for --seconds, with the SNI --name, to --addr:443. Prints one JSON object:
{"handshakes": N, "seconds": S, "rate": N/S, "errors": E}. Certificates are not
verified (the bench's own self-signed one); the handshake is complete either way.

With --refused N it instead makes N connections whose handshake the policy refuses
(a name outside it) and measures, for each, the wait from the established connect to
the error the client sees (the kernel holds the ClientHello, then the daemon destroys
the socket). Prints {"refused": N, "waits_ms": [...], "timeouts": T, "handshakes": H}:
a wait of --timeout seconds is a timeout (the flow stalled), a handshake is a failure
of the rule."""
import argparse
import json
import socket
import ssl
import time


def refused_waits(args, ctx):
    """The connect -> error wait of each of --refused refused handshakes."""
    waits, timeouts, handshakes = [], 0, 0
    for _ in range(args.refused):
        s = socket.create_connection((args.addr, args.port), timeout=args.timeout)
        start = time.monotonic()
        try:
            with ctx.wrap_socket(s, server_hostname=args.name):
                handshakes += 1
        except socket.timeout:
            timeouts += 1
        except (OSError, ssl.SSLError):
            pass
        finally:
            s.close()
        waits.append(round((time.monotonic() - start) * 1000, 1))
    return {"refused": args.refused, "waits_ms": waits, "timeouts": timeouts,
            "handshakes": handshakes}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--addr", required=True)
    p.add_argument("--name", required=True)
    p.add_argument("--port", type=int, default=443)
    p.add_argument("--seconds", type=float, default=2.0)
    p.add_argument("--refused", type=int, default=0)
    p.add_argument("--timeout", type=float, default=10.0)
    args = p.parse_args()
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if args.refused:
        print(json.dumps(refused_waits(args, ctx)))
        return
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
