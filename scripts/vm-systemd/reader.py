#!/usr/bin/env python3
"""A reader of Bearing's socket for the systemd VM suite (runs in the guest, as a test user).

    reader.py SOCKET --seconds S [--watch CLASSES] [--reconnect] [--out FILE]
    reader.py --analyse FILE --expect restart-gap|reconnect

Connects, sends ?WATCH={"enable":true,"json":true,"classes":[...]}; when --watch is given, and writes each
line received as "<CLOCK_MONOTONIC seconds> <line>" to FILE (or stdout) until S seconds have passed. With
--reconnect a closed connection is opened again at once (a restarted service's readers do this), and each
(re)connection is logged as "<t> #CONNECTED". Exit status: 0, or 13 when the socket refused us (EACCES),
2 for any other connection error.

--analyse reads such a FILE and prints what the suite's checks judge: the ATT lines, the connections, the ATT
after the second connection, the gaps between ATT (over 1.5 s: big; 0.9-1.5 s: odd, each with the seconds since
the latest connection), and OK or NOT-OK for --expect restart-gap (ATT every 0.5 s before and after one restart,
one gap between, nothing else missing) or --expect reconnect (connected again, and at least 5 ATT after).

The gaps are measured on the daemon's clock, the ATT's own "time", when every ATT has one: what the daemon sent,
not when this reader was run. In the suite's VM (one emulated CPU, qemu TCG, beside the host's other tests) the
reader itself can be late by 0.4 s, which on the receiving clock made a 0.9 s gap of an ATT that was not lost.
"""
import datetime
import argparse
import json
import socket
import sys
import time


def daemon_time(obj):
    """An ATT's own "time" (ISO 8601, UTC) in seconds, or None."""
    try:
        return datetime.datetime.fromisoformat(obj["time"].replace("Z", "+00:00")).timestamp()
    except (KeyError, AttributeError, TypeError, ValueError):
        return None


def analyse(path, expect):
    received, stamped, since_connect, connects, after_reconnect = [], [], [], 0, 0
    connected_at = 0.0
    for line in open(path):
        t, _, rest = line.partition(" ")
        if rest.startswith("#CONNECTED"):
            connects += 1
            connected_at = float(t)
            continue
        try:
            obj = json.loads(rest)
        except ValueError:
            print("BAD", rest.strip())
            continue
        if obj.get("class") == "ATT":
            received.append(float(t))
            stamped.append(daemon_time(obj))
            since_connect.append(float(t) - connected_at)
            if connects >= 2:
                after_reconnect += 1
    clock = "daemon" if stamped and None not in stamped else "received"
    times = stamped if clock == "daemon" else received
    gaps = [b - a for a, b in zip(times, times[1:])]
    big = [g for g in gaps if g > 1.5]
    odd = [(g, since_connect[i + 1]) for i, g in enumerate(gaps) if 0.9 < g <= 1.5]
    after_gap = len([t for t in times if big and t > times[gaps.index(big[0]) + 1] - 0.01])
    print(f"att={len(times)} connects={connects} att_after_reconnect={after_reconnect} clock={clock} "
          f"big_gaps={['%.1f' % g for g in big]} odd_gaps={len(odd)} after_gap={after_gap}"
          + "".join(f" odd={g:.2f}s@{at:.1f}s" for g, at in odd))
    if expect == "restart-gap":
        ok = len(big) == 1 and not odd and connects >= 2 and after_gap >= 5
    else:
        ok = connects >= 2 and after_reconnect >= 5
    print("OK" if ok else "NOT-OK")
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("socket", nargs="?")
    ap.add_argument("--seconds", type=float)
    ap.add_argument("--watch")
    ap.add_argument("--reconnect", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("--analyse")
    ap.add_argument("--expect", choices=["restart-gap", "reconnect"], default="reconnect")
    a = ap.parse_args()
    if a.analyse:
        return analyse(a.analyse, a.expect)
    if a.socket is None or a.seconds is None:
        ap.error("SOCKET and --seconds are needed (or --analyse FILE)")
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
