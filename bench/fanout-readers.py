#!/usr/bin/python3
"""Readers for bench/fanout: N UNIX-socket clients in one process, each watching TPV and ATT with a chain
of its own (--mode own) or one of three named pipelines (--mode named); counts what each receives and
every OVERFLOW (a drop). Prints one JSON line at the end."""
import json, selectors, socket, sys, time

path, n, mode, seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
sel = selectors.DefaultSelector()
counts, dropped, buffers = {}, 0, {}
for i in range(n):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    if mode == "own":
        watch = {"enable": True, "json": True, "classes": ["TPV", "ATT"],
                 "pipelines": {"TPV": [{"op": "dedupe", "key": "time"}], "ATT": [{"op": "dedupe", "key": "time"}]}}
    else:
        watch = {"enable": True, "json": True, "classes": ["TPV", "ATT"], "pipeline": "n%d" % (i % 3)}
    s.sendall(("?WATCH=" + json.dumps(watch) + ";\n").encode())
    s.setblocking(False)
    sel.register(s, selectors.EVENT_READ, i)
    counts[i] = 0
    buffers[i] = b""
end = time.monotonic() + seconds
while time.monotonic() < end:
    for key, _ in sel.select(timeout=0.5):
        i = key.data
        try:
            data = key.fileobj.recv(1 << 16)
        except BlockingIOError:
            continue
        if not data:
            sel.unregister(key.fileobj)
            continue
        buf = buffers[i] + data
        lines = buf.split(b"\n")
        buffers[i] = lines.pop()
        for line in lines:
            if line.startswith(b'{"class":"TPV"') or line.startswith(b'{"class":"ATT"'):
                counts[i] += 1
            elif line.startswith(b'{"class":"OVERFLOW"'):
                dropped += json.loads(line)["dropped"]
total = sum(counts.values())
print(json.dumps({"delivered": total, "min_per_client": min(counts.values()), "max_per_client": max(counts.values()), "dropped": dropped}))
