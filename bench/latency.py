#!/usr/bin/env python3
"""Latency Bearing adds between gpsd and a socket client.

Replays a generated track through gpsfake; one client reads gpsd directly (TCP, ?WATCH json), another
reads Bearing's UNIX socket (agent in --passthrough); both are read in one select() loop and each TPV
is timestamped on arrival. The latency of a TPV is its arrival at the Bearing client minus its arrival
at the direct client. Prints the count, median, p90, p99 and max in microseconds.

usage: bench/latency.py [path/to/bearing] [--epochs N] [--pace SECONDS_PER_SENTENCE]
"""
import argparse, json, os, select, shutil, signal, socket, statistics, subprocess, sys, tempfile, time

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
        b = socket.socket(socket.AF_UNIX); b.connect(sock_path)
        b.sendall(b'?WATCH={"enable":true,"json":true};\n')
        procs.append(subprocess.Popen(["/usr/bin/gpsfake", "-1", "-p", "-q", "-P", str(port), "-c", str(a.pace), track],
                                      env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        d = None
        deadline = time.time() + 10
        while d is None and time.time() < deadline:
            try:
                d = socket.create_connection(("127.0.0.1", port)); d.sendall(b'?WATCH={"enable":true,"json":true};\n')
            except OSError:
                d = None; time.sleep(0.02)
        if d is None:
            sys.exit("gpsd never came up")
        arrivals = {d: {}, b: {}}
        bufs = {d: b"", b: b""}
        seen = {d: {}, b: {}}
        open_socks = [d, b]
        end = time.time() + a.epochs * a.pace * 6 + 30
        while open_socks and time.time() < end:
            r, _, _ = select.select(open_socks, [], [], 1.0)
            now = time.monotonic_ns()
            for s in r:
                chunk = s.recv(65536)
                if not chunk:
                    open_socks.remove(s); continue
                bufs[s] += chunk
                *lines, bufs[s] = bufs[s].split(b"\n")
                for line in lines:
                    if b'"class":"TPV"' not in line:
                        continue
                    o = json.loads(line)
                    key = (o.get("time"), o.get("mode"), o.get("lat"), o.get("lon"), o.get("speed"))
                    n = seen[s].get(key, 0); seen[s][key] = n + 1
                    arrivals[s][(key, n)] = now
            if d not in open_socks:
                break   # gpsd finished; Bearing's copies have long arrived
        lat = sorted((arrivals[b][k] - t) / 1000 for k, t in arrivals[d].items() if k in arrivals[b])
        if not lat:
            sys.exit("no TPV matched")
        q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
        print(f"TPVs matched {len(lat)} of {len(arrivals[d])} read from gpsd directly")
        print(f"added latency µs: median {statistics.median(lat):.0f}  p90 {q(0.90):.0f}  p99 {q(0.99):.0f}  max {lat[-1]:.0f}")
    finally:
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
            try: p.wait(10)
            except subprocess.TimeoutExpired: p.kill()
        shutil.rmtree(tmp, ignore_errors=True)

if __name__ == "__main__":
    main()
