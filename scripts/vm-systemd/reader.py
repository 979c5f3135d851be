#!/usr/bin/env python3
"""A reader of Bearing's socket for the systemd VM suite (runs in the guest, as a test user).

    reader.py SOCKET --seconds S [--watch CLASSES] [--reconnect] [--out FILE]

Connects, sends ?WATCH={"enable":true,"json":true,"classes":[...]}; when --watch is given, and writes each
line received as "<CLOCK_MONOTONIC seconds> <line>" to FILE (or stdout) until S seconds have passed. With
--reconnect a closed connection is opened again at once (a restarted service's readers do this), and each
(re)connection is logged as "<t> #CONNECTED". Exit status: 0, or 13 when the socket refused us (EACCES),
2 for any other connection error.
"""
import argparse
import json
import socket
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("socket")
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--watch")
    ap.add_argument("--reconnect", action="store_true")
    ap.add_argument("--out")
    a = ap.parse_args()
    out = open(a.out, "w", buffering=1) if a.out else sys.stdout
    end = time.monotonic() + a.seconds
    while time.monotonic() < end:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(a.socket)
        except PermissionError as e:
            print(f"refused: {e}", file=sys.stderr)
            return 13
        except OSError as e:
            if a.reconnect:
                time.sleep(0.05)
                continue
            print(f"cannot connect: {e}", file=sys.stderr)
            return 2
        out.write(f"{time.monotonic():.3f} #CONNECTED\n")
        if a.watch:
            req = {"enable": True, "json": True, "classes": a.watch.split(",")}
            s.sendall(f"?WATCH={json.dumps(req)};\n".encode())
        buf = b""
        while time.monotonic() < end:
            s.settimeout(max(0.05, end - time.monotonic()))
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                break
            except OSError:
                chunk = b""
            if not chunk:
                break
            buf += chunk
            *lines, buf = buf.split(b"\n")
            now = time.monotonic()
            for line in lines:
                out.write(f"{now:.3f} {line.decode(errors='replace').rstrip()}\n")
        s.close()
        if not a.reconnect:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
