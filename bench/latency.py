#!/usr/bin/env python3
"""Latency Bearing adds between gpsd and a socket client.

Replays a generated track through gpsfake; one reader process reads gpsd directly (TCP, ?WATCH json),
another reads Bearing's UNIX socket (agent in --passthrough); each timestamps every TPV on arrival with
CLOCK_MONOTONIC. The latency of a TPV is its arrival at the Bearing reader minus its arrival at the
direct reader. Prints the count, median, p90, p99 and max in microseconds.

usage: bench/latency.py [path/to/bearing] [--epochs N] [--pace SECONDS_PER_SENTENCE]
"""
import argparse, json, os, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

# A reader: connects (unix PATH or tcp PORT, retrying until the server is up), watches, and records each
# TPV's arrival (monotonic ns) under its content; the n-th repeat of a TPV is keyed apart. Prints JSON.
READER = r"""
import json, socket, sys, time
kind, target, dur = sys.argv[1], sys.argv[2], float(sys.argv[3])
end = time.monotonic() + dur
while True:
    try:
        s = socket.socket(socket.AF_UNIX) if kind == "unix" else socket.socket()
        s.connect(target if kind == "unix" else ("127.0.0.1", int(target)))
        break
    except OSError:
        s.close(); time.sleep(0.01)
        if time.monotonic() > end: sys.exit("no server")
s.sendall(b'?WATCH={"enable":true,"json":true};\n')
s.settimeout(1.0)
buf, seen, out = b"", {}, []
last = time.monotonic()
while time.monotonic() < end:
    try:
        chunk = s.recv(65536)
    except socket.timeout:
        # gpsd closes when gpsfake is done; Bearing stays up, so its reader ends after 3 s of silence.
        if out and time.monotonic() - last > 3:
            break
        continue
    now = time.monotonic_ns()
    last = time.monotonic()
    if not chunk:
        break
    *lines, buf = (buf + chunk).split(b"\n")
    for line in lines:
        if b'"class":"TPV"' not in line:
            continue
        o = json.loads(line)
        key = [o.get("time"), o.get("mode"), o.get("lat"), o.get("lon"), o.get("speed")]
        n = seen.get(json.dumps(key), 0); seen[json.dumps(key)] = n + 1
        out.append([key + [n], now])
print(json.dumps(out))
"""

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary", nargs="?", default=".build/release/bearing")
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--pace", type=float, default=0.02)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="bearing-latency-")
    procs = []
    try:
        track = os.path.join(tmp, "track.nmea")
        subprocess.run([a.binary, "simulate-track", "--epochs", str(a.epochs), "-o", track], check=True)
        cfg = os.path.join(tmp, "bearing.yaml")
        with open(cfg, "w") as f:
            f.write("gpsd: {retry_initial: 0.02, retry_max: 0.2}\n")
        port = free_port()
        sock_path = os.path.join(tmp, "bearing.sock")
        env = dict(os.environ, TMPDIR=tmp)
        procs.append(subprocess.Popen([a.binary, "run", "--config", cfg, "--passthrough", "--gpsd", f"127.0.0.1:{port}",
                                       "--socket", sock_path, "--log-level", "error"]))
        while not os.path.exists(sock_path):
            time.sleep(0.01)
        # One reader process per stream, each timestamping TPVs on arrival with CLOCK_MONOTONIC (one clock
        # for the whole machine): a single select() loop over both would make Bearing's copy wait while it
        # parsed gpsd's, and charge that to Bearing.
        dur = a.epochs * a.pace * 6 + 30
        readers = [subprocess.Popen([sys.executable, "-c", READER, kind, target, str(dur)], stdout=subprocess.PIPE, text=True)
                   for kind, target in (("unix", sock_path), ("tcp", str(port)))]
        time.sleep(0.5)
        procs.append(subprocess.Popen(["/usr/bin/gpsfake", "-1", "-p", "-q", "-P", str(port), "-c", str(a.pace), track],
                                      env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        outs = [r.communicate(timeout=dur + 30)[0] for r in readers]
        b_arr, d_arr = [json.loads(o) for o in outs]
        arrivals_b = {tuple(json.dumps(k) for k in key): t for key, t in b_arr}
        arrivals_d = {tuple(json.dumps(k) for k in key): t for key, t in d_arr}
        lat = sorted((arrivals_b[k] - t) / 1000 for k, t in arrivals_d.items() if k in arrivals_b)
        if not lat:
            sys.exit("no TPV matched")
        q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
        print(f"TPVs matched {len(lat)} of {len(arrivals_d)} read from gpsd directly")
        print(f"added latency µs: median {statistics.median(lat):.0f}  p90 {q(0.90):.0f}  p99 {q(0.99):.0f}  max {lat[-1]:.0f}")
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
            try: p.wait(10)
            except subprocess.TimeoutExpired: p.kill()
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
