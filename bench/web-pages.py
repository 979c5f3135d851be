"""bench/web-pages: see that script. Arguments: BIN SECONDS PAGES."""
import json, os, selectors, signal, socket, subprocess, sys, tempfile, time, urllib.parse

BIN, SECONDS, PAGES = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
HZ = os.sysconf("SC_CLK_TCK")
WATCH = {"enable": True, "json": True, "classes": ["ATT"], "pipelines": {"ATT": []}}


def die(message):
    print(f"bench/web-pages: {message}", file=sys.stderr)
    sys.exit(1)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / HZ


def thread_cpu(pid, name):
    """CPU seconds of the process's threads called `name` (libmicrohttpd's listener is MHD-listen)."""
    total = 0
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            if open(f"/proc/{pid}/task/{t}/comm").read().strip() == name:
                fields = open(f"/proc/{pid}/task/{t}/stat").read().rsplit(")", 1)[1].split()
                total += int(fields[11]) + int(fields[12])
        except FileNotFoundError:
            pass
    return total / HZ


def status(pid, key):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(key + ":"):
            return int(line.split()[1])
    die(f"no {key} in /proc/{pid}/status")


def start(directory, web):
    sock = os.path.join(directory, f"s-{web}.sock")
    port = free_port()
    config = os.path.join(directory, f"c-{web}.yaml")
    with open(config, "w") as f:
        f.write(f"socket: {{path: {sock}, max_clients: 256}}\ngpsd: {{port: 1, retry_max: 60}}\n"
                f"heading: {{fallback_position: [50.8, -1.1]}}\nmagnetometer: {{calibration: {directory}/cal.json}}\n"
                f"calibration: {{auto_file: {directory}/auto.json}}\nblackbox: {{enabled: false}}\n")
        if web:
            f.write(f"web: {{port: {port}, max_pages: 256, credential: {directory}/none}}\n")
    p = subprocess.Popen([BIN, "run", "--board", "simulator", "--config", config, "--log-level", "error"])
    for _ in range(100):
        if os.path.exists(sock):
            break
        time.sleep(0.1)
    else:
        die("the daemon did not start")
    time.sleep(3)  # past start-up: the first fits, the page-out of start-up code
    return p, sock, port


def measure(pid, seconds, readers):
    """CPU seconds of the daemon and lines delivered to `readers` (socket, sse) over `seconds`."""
    sel = selectors.DefaultSelector()
    counts = {}
    for r in readers:
        r.setblocking(False)
        sel.register(r, selectors.EVENT_READ)
        counts[r] = 0
    # Drain what came before the window.
    end = time.monotonic() + 1
    while time.monotonic() < end:
        for key, _ in sel.select(0.1):
            try:
                key.fileobj.recv(1 << 16)
            except BlockingIOError:
                pass
    c0 = cpu_seconds(pid)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for key, _ in sel.select(0.1):
            try:
                data = key.fileobj.recv(1 << 16)
            except BlockingIOError:
                continue
            counts[key.fileobj] += data.count(b'"class":"ATT"')
    c1 = cpu_seconds(pid)
    sel.close()
    return c1 - c0, sum(counts.values()), min(counts.values()) if counts else 0


def latencies(path, seconds):
    """One socket reader's delay per ATT: arrival (wall clock) minus the ATT's sample `time`, ms."""
    s = socket_reader(path)
    s.settimeout(0.5)
    out, buf, end = [], b"", time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            buf += s.recv(1 << 16)
        except socket.timeout:
            continue
        now = time.time()
        *lines, buf = buf.split(b"\n")
        for line in lines:
            if b'"class":"ATT"' in line:
                t = json.loads(line)["time"]
                stamp = time.mktime(time.strptime(t[:19], "%Y-%m-%dT%H:%M:%S")) - time.timezone + float("0" + t[19:-1])
                out.append((now - stamp) * 1000)
    s.close()
    out.sort()
    if not out:
        die("the latency reader got no ATT")
    return out[len(out) // 2], out[int(len(out) * 0.95)], len(out)


def socket_reader(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.sendall(("?WATCH=" + json.dumps(WATCH, separators=(",", ":")) + ";\n").encode())
    return s


def page(port):
    s = socket.create_connection(("127.0.0.1", port))
    q = urllib.parse.quote(json.dumps(WATCH, separators=(",", ":")))
    s.sendall(f"GET /events?watch={q} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    return s


with tempfile.TemporaryDirectory() as d:
    plain, _, _ = start(d, web=False)
    web, sock, port = start(d, web=True)
    try:
        idle_plain, _, _ = measure(plain.pid, SECONDS, [])
        listener0 = thread_cpu(web.pid, "MHD-listen")
        idle_web, _, _ = measure(web.pid, SECONDS, [])
        listener = thread_cpu(web.pid, "MHD-listen") - listener0
        threads_plain, threads_web = status(plain.pid, "Threads"), status(web.pid, "Threads")
        plain.send_signal(signal.SIGTERM)
        plain.wait()
        rss_idle = status(web.pid, "VmRSS")
        readers = [socket_reader(sock) for _ in range(PAGES)]
        cpu_s, n_s, min_s = measure(web.pid, SECONDS, readers)
        for r in readers:
            r.close()
        time.sleep(1)
        if web.poll() is not None:
            die(f"the daemon exited ({web.returncode}) after the socket readers")
        pages = [page(port) for _ in range(PAGES)]
        cpu_p, n_p, min_p = measure(web.pid, SECONDS, pages)
        rss_pages = status(web.pid, "VmRSS")
        threads_pages = status(web.pid, "Threads")
        for p in pages:
            p.close()
        time.sleep(1)
        lat0 = latencies(sock, SECONDS)
        many = [page(port) for _ in range(50)]
        lat50 = latencies(sock, SECONDS)
        for p in many:
            p.close()
    finally:
        for p in (plain, web):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait()
    if n_s == 0 or n_p == 0 or min_s == 0 or min_p == 0:
        die(f"a phase delivered nothing (socket {n_s}, min {min_s}; pages {n_p}, min {min_p})")
    per_s = (cpu_s - idle_web) / n_s * 1e6
    per_p = (cpu_p - idle_web) / n_p * 1e6
    print(f"idle {SECONDS:.0f} s: CPU {idle_plain:.3f} s without the web door, {idle_web:.3f} s with it and no page open "
          f"({threads_plain} → {threads_web} threads; the web door's listener thread used {listener:.3f} s of it)")
    print(f"{PAGES} socket readers: {n_s} ATT delivered, CPU {cpu_s:.3f} s: {per_s:.2f} µs per delivered message above idle")
    print(f"{PAGES} pages:          {n_p} ATT delivered, CPU {cpu_p:.3f} s: {per_p:.2f} µs per delivered message above idle")
    print(f"a socket reader's ATT delay (arrival − sample time): median {lat0[0]:.1f} ms, p95 {lat0[1]:.1f} ms with no page open "
          f"({lat0[2]} ATT); median {lat50[0]:.1f} ms, p95 {lat50[1]:.1f} ms with 50 pages open ({lat50[2]} ATT)")
    print(f"a page costs {per_p / per_s:.2f}× a socket reader per message; RSS {rss_idle / 1024:.1f} MB idle, "
          f"{rss_pages / 1024:.1f} MB with {PAGES} pages open (+{(rss_pages - rss_idle) / 1024:.2f} MB, "
          f"{(rss_pages - rss_idle) / PAGES:.0f} KB a page); {threads_pages} threads")
