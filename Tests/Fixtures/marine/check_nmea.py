#!/usr/bin/env python3
"""Check Bearing's NMEA 0183 door output against Bearing's own gpsd-style JSON.

Usage:
    check_nmea.py SENTENCES_FILE JSON_FILE [--report OUT.json] [--talker HC]

SENTENCES_FILE holds the bytes read from the NMEA door: one sentence a line,
each ending in CR LF.  JSON_FILE is NDJSON of the gpsd JSON objects Bearing
published over the same time (ATT and TPV are used, other classes are
skipped): the full stream, at a higher rate than the sentences.  The door
sends a subsequence of it, its values rounded to one decimal.

Every sentence must
  * be framed right: start with '$', end with CR LF, be at most 82 bytes with
    the CR LF, printable ASCII, '*HH' checksum in upper-case hex;
  * parse with pynmea2.parse(line, check=True) (the checksum verified);
  * have the field count and fixed letters of its type, numbers where numbers
    go, and pynmea2's parsed attributes agree with the raw field strings;
  * match a JSON object.  Sentences carry no time, so they are matched in
    order: one pointer into the ATT objects (HDT, HDM, HDG, ROT, XDR) and one
    into the TPV objects (RMC) move forward to the first object the sentence
    matches and stay there (the sentences of one group, built from one ATT,
    all match that ATT).  A sentence that matches nothing before the end of
    the stream fails.

Field semantics (|difference| <= 0.05 for one-decimal fields, angles mod 360):
  HDT  heading,T                          = ATT heading (true)
  HDM  heading,M                          = ATT mheading
  HDG  heading,dev,E/W,var,E/W            heading = the sensor heading, mheading
                                          less the ATT's deviation; deviation =
                                          |deviation|, E when >= 0, W when < 0,
                                          both EMPTY when the ATT has none;
                                          variation = |declination|,
                                          E when declination >= 0, W when < 0,
                                          both fields EMPTY when the ATT has no
                                          declination (a "0.0" there fails)
  ROT  rate,status                        rate = rot (deg/min) with A; empty
                                          rate with V when the ATT has no rot
  XDR  (A,value,D,PTCH|ROLL)...           PTCH = pitch, ROLL = roll (degrees)
  RMC  time,status,lat,N/S,lon,E/W,sog,cog,date,magvar,E/W[,mode[,navstatus]]
                                          time/date = TPV time (at the
                                          sentence's precision), status A iff
                                          mode >= 2, lat/lon within 1e-5 deg,
                                          sog (knots) = speed within 0.05,
                                          cog = track, magvar = declination of
                                          the nearest ATT (skipped when unknown)

Exit status: 0 all sentences pass; 1 any failure (or no sentences at all);
2 usage or input errors; 77 pynmea2 cannot be imported (skip).
Works with pynmea2 1.15 (Debian) and 1.19 (PyPI); stdlib otherwise.
"""

import argparse
import bisect
import datetime
import json
import re
import sys
from decimal import Decimal

from report import write_report  # beside this script

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_SKIP = 0, 1, 2, 77

TOL = 0.05 + 1e-9            # one-decimal fields
LATLON_TOL = 1e-5            # degrees
KNOTS_PER_MPS = 3600.0 / 1852.0
MAX_LEN = 82                 # bytes, '$' to LF inclusive (NMEA 0183 4.10 §5.3)
MAX_DETAILED = 25            # failures printed in full; the rest are counted

ATT_TYPES = ("HDT", "HDM", "HDG", "ROT", "XDR")
TPV_TYPES = ("RMC",)
ALL_TYPES = ATT_TYPES + TPV_TYPES
FIELD_COUNT = {"HDT": (2,), "HDM": (2,), "HDG": (5,), "ROT": (2,), "RMC": (11, 12, 13)}

FRAME_RE = re.compile(r"^\$([A-Z0-9]{2})([A-Z0-9]{3}),([^*$!]*)\*([0-9A-F]{2})$")
NUM_RE = re.compile(r"^-?\d+(\.\d+)?$")
UNUM_RE = re.compile(r"^\d+(\.\d+)?$")
LAT_RE = re.compile(r"^(\d{2})(\d{2}\.\d+)$")
LON_RE = re.compile(r"^(\d{3})(\d{2}\.\d+)$")
TIME_RE = re.compile(r"^(\d{2})(\d{2})(\d{2})(\.\d+)?$")
DATE_RE = re.compile(r"^(\d{2})(\d{2})(\d{2})$")
RMC_MODES = "ADEFMNPRS"


class Malformed(Exception):
    """The sentence itself is wrong, whatever the JSON says."""


def angdiff(a, b):
    """|a - b| for angles in degrees, modulo 360."""
    d = (a - b) % 360.0
    return min(d, 360.0 - d)


def fnum(raw, what, signed=True):
    """A numeric field's raw string as float; Malformed if it is not an NMEA number."""
    if not (NUM_RE if signed else UNUM_RE).match(raw):
        raise Malformed("%s %r is not a%s number" % (what, raw, "" if signed else "n unsigned"))
    return float(raw)


def same_decimal(parsed, raw, what):
    """pynmea2's Decimal-typed attribute must equal the raw field (or be None when empty)."""
    if raw == "":
        if parsed is not None:
            raise Malformed("pynmea2 gives %s=%r for an empty field" % (what, parsed))
        return
    if not isinstance(parsed, Decimal) or parsed != Decimal(raw):
        raise Malformed("pynmea2 gives %s=%r, raw field %r" % (what, parsed, raw))


def same_str(parsed, raw, what):
    if (parsed or "") != raw:
        raise Malformed("pynmea2 gives %s=%r, raw field %r" % (what, parsed, raw))


def parse_iso(s):
    """gpsd ISO 8601 time -> (aware datetime, Decimal seconds since the epoch)."""
    m = re.match(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?Z$", s)
    if not m:
        raise ValueError("time %r is not gpsd's YYYY-MM-DDThh:mm:ss[.sss]Z" % s)
    y, mo, d, h, mi, sec = (int(x) for x in m.groups()[:6])
    frac = m.group(7) or ""
    dt = datetime.datetime(y, mo, d, h, mi, sec, tzinfo=datetime.timezone.utc)
    whole = int(dt.timestamp())
    return dt, Decimal(whole) + (Decimal(frac) if frac else Decimal(0))


# --------------------------------------------------------------------------- #
# Decoding: raw fields -> values, with pynmea2's attributes cross-checked.
# --------------------------------------------------------------------------- #

def decode(msg, st, fields):
    """Values of one parsed sentence (dict), or Malformed."""
    n = len(fields)
    if st in FIELD_COUNT and n not in FIELD_COUNT[st]:
        raise Malformed("%s has %d fields, expected %s" % (
            st, n, " or ".join(str(c) for c in FIELD_COUNT[st])))
    v = {}
    if st in ("HDT", "HDM"):
        letter = "T" if st == "HDT" else "M"
        if fields[1] != letter:
            raise Malformed("%s field 2 is %r, expected %r" % (st, fields[1], letter))
        if fields[0] == "":
            raise Malformed("%s heading is empty" % st)
        v["heading"] = fnum(fields[0], "heading", signed=False)
        same_decimal(msg.heading, fields[0], "heading")
        same_str(msg.hdg_true if st == "HDT" else msg.magnetic, fields[1], "field 2")
    elif st == "HDG":
        head, dev, dev_dir, var, var_dir = fields
        if head == "":
            raise Malformed("HDG heading is empty")
        v["heading"] = fnum(head, "heading", signed=False)
        v["deviation_raw"] = (dev, dev_dir)
        if dev != "":
            fnum(dev, "deviation", signed=False)
        if dev_dir not in ("", "E", "W"):
            raise Malformed("HDG deviation direction %r" % dev_dir)
        if (var == "") != (var_dir == ""):
            raise Malformed("HDG variation %r with direction %r: both or neither" % (var, var_dir))
        if var_dir not in ("", "E", "W"):
            raise Malformed("HDG variation direction %r" % var_dir)
        v["variation"] = None if var == "" else fnum(var, "variation", signed=False)
        v["var_dir"] = var_dir
        v["var_raw"] = var
        same_decimal(msg.heading, head, "heading")
        same_decimal(msg.deviation, dev, "deviation")
        same_str(msg.dev_dir, dev_dir, "dev_dir")
        same_decimal(msg.variation, var, "variation")
        same_str(msg.var_dir, var_dir, "var_dir")
    elif st == "ROT":
        rate, status = fields
        if status not in ("A", "V"):
            raise Malformed("ROT status %r, expected A or V" % status)
        v["rate"] = None if rate == "" else fnum(rate, "rate of turn")
        v["status"] = status
        same_str(msg.rate_of_turn, rate, "rate_of_turn")
        same_str(msg.status, status, "status")
    elif st == "XDR":
        if n == 0 or n % 4:
            raise Malformed("XDR has %d fields, not a multiple of 4" % n)
        if msg.num_transducers != n // 4:
            raise Malformed("pynmea2 counts %d transducers for %d fields" % (msg.num_transducers, n))
        tx = {}
        for i in range(n // 4):
            t = msg.get_transducer(i)
            q = fields[4 * i:4 * i + 4]
            if [t.type, t.value, t.units, t.id] != q:
                raise Malformed("pynmea2 transducer %d is %r, raw %r" % (i, tuple(t), q))
            typ, val, units, name = q
            if typ != "A" or units != "D":
                raise Malformed("XDR transducer %s: type %r units %r, expected A and D" % (name, typ, units))
            if name not in ("PTCH", "ROLL"):
                raise Malformed("XDR transducer name %r, expected PTCH or ROLL" % name)
            if name in tx:
                raise Malformed("XDR transducer %s twice" % name)
            if val == "":
                raise Malformed("XDR %s value is empty" % name)
            tx[name] = fnum(val, "XDR %s value" % name)
        v["pitch"] = tx.get("PTCH")
        v["roll"] = tx.get("ROLL")
        v["names"] = sorted(tx)
    elif st == "RMC":
        decode_rmc(msg, fields, v)
    if "heading" in v and not 0.0 <= v["heading"] < 360.0:
        raise Malformed("heading %r outside [0, 360)" % v["heading"])
    return v


def decode_rmc(msg, f, v):
    time_s, status, lat, ns, lon, ew, sog, cog, date_s, mv, mv_dir = f[:11]
    mode = f[11] if len(f) > 11 and f[11] != "" else None   # NMEA 2.3 mode; may be null
    if status not in ("A", "V"):
        raise Malformed("RMC status %r" % status)
    v["status"] = status
    tm, dm = TIME_RE.match(time_s), DATE_RE.match(date_s)
    if not tm or not dm:
        raise Malformed("RMC time %r / date %r not hhmmss[.ss] / ddmmyy" % (time_s, date_s))
    hh, mi, ss = int(tm.group(1)), int(tm.group(2)), int(tm.group(3))
    dd, mo, yy = int(dm.group(1)), int(dm.group(2)), int(dm.group(3))
    try:
        dt = datetime.datetime(2000 + yy, mo, dd, hh, mi, ss, tzinfo=datetime.timezone.utc)
    except ValueError as e:
        raise Malformed("RMC time/date %s %s: %s" % (time_s, date_s, e))
    frac = tm.group(4) or ""
    v["time"] = Decimal(int(dt.timestamp())) + (Decimal(frac) if frac else Decimal(0))
    v["time_digits"] = len(frac) - 1 if frac else 0
    v["time_raw"] = "%s %s" % (date_s, time_s)
    # pynmea2: datetime is naive in 1.15, UTC-aware in 1.19.
    pdt = msg.datetime
    if pdt.replace(tzinfo=None) != dt.replace(tzinfo=None) + datetime.timedelta(
            microseconds=int(float(frac) * 1e6) if frac else 0):
        raise Malformed("pynmea2 datetime %r, raw %s %s" % (pdt, date_s, time_s))
    for name, raw, rx, hemis in (("lat", lat, LAT_RE, "NS"), ("lon", lon, LON_RE, "EW")):
        hemi = ns if name == "lat" else ew
        if raw == "":
            if hemi != "":
                raise Malformed("RMC %s empty but hemisphere %r" % (name, hemi))
            v[name] = None
            continue
        m = rx.match(raw)
        if not m or hemi not in hemis or len(hemi) != 1:
            raise Malformed("RMC %s %r,%r not %s,%s" % (
                name, raw, hemi, "ddmm.mmmm" if name == "lat" else "dddmm.mmmm", "/".join(hemis)))
        deg, minutes = int(m.group(1)), float(m.group(2))
        if minutes >= 60:
            raise Malformed("RMC %s %r: minutes >= 60" % (name, raw))
        val = deg + minutes / 60.0
        if hemi in "SW":
            val = -val
        v[name] = val
        parsed = msg.latitude if name == "lat" else msg.longitude
        if abs(parsed - val) > 1e-9:
            raise Malformed("pynmea2 gives %s %r, raw %r" % (name, parsed, val))
    v["sog"] = None if sog == "" else fnum(sog, "speed over ground", signed=False)
    v["cog"] = None if cog == "" else fnum(cog, "course over ground", signed=False)
    if v["cog"] is not None and not 0.0 <= v["cog"] < 360.0:
        raise Malformed("RMC course %r outside [0, 360)" % v["cog"])
    for name, raw, parsed in (("sog", sog, msg.spd_over_grnd), ("cog", cog, msg.true_course)):
        if (raw == "" and parsed is not None) or (raw != "" and parsed != float(raw)):
            raise Malformed("pynmea2 gives %s=%r, raw %r" % (name, parsed, raw))
    if (mv == "") != (mv_dir == "") or mv_dir not in ("", "E", "W"):
        raise Malformed("RMC magnetic variation %r,%r" % (mv, mv_dir))
    same_str(msg.mag_variation, mv, "mag_variation")
    same_str(msg.mag_var_dir, mv_dir, "mag_var_dir")
    v["magvar"] = None if mv == "" else fnum(mv, "magnetic variation", signed=False) * (
        -1.0 if mv_dir == "W" else 1.0)
    v["magvar_raw"] = "%s,%s" % (mv, mv_dir)
    v["mode"] = mode
    if mode is not None:
        if mode not in RMC_MODES or len(mode) != 1:
            raise Malformed("RMC mode indicator %r not one of %s" % (mode, RMC_MODES))
        if (mode == "N") != (status == "V") and mode != "E":
            # NMEA 0183 2.3+: status V with mode N (no fix); A with A/D/F/P/R...
            raise Malformed("RMC status %s with mode indicator %s" % (status, mode))
        if len(f) > 12 and f[12] not in ("S", "C", "U", "V"):
            raise Malformed("RMC navigational status %r not S, C, U or V" % f[12])
        pm = getattr(msg, "mode_indicator", None)   # 1.19 only
        if pm is not None and pm != mode:
            raise Malformed("pynmea2 mode_indicator %r, raw %r" % (pm, mode))


# --------------------------------------------------------------------------- #
# Matching a decoded sentence to one JSON object: list of (problem, diff).
# --------------------------------------------------------------------------- #

def num(obj, key):
    x = obj.get(key)
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def cmp_val(problems, diffs, label, sent, ref, angle=False, tol=TOL):
    if ref is None:
        problems.append("%s %s in the sentence but absent from the object" % (label, sent))
        return
    d = angdiff(sent, ref) if angle else abs(sent - ref)
    diffs[label] = d
    if not d <= tol:
        problems.append("%s %s vs %s (|d|=%.4g)" % (label, sent, ref, d))


def match_att(st, v, att):
    p, d = [], {}
    if st == "HDT":
        cmp_val(p, d, "heading", v["heading"], num(att, "heading"), angle=True)
    elif st == "HDM":
        cmp_val(p, d, "heading", v["heading"], num(att, "mheading"), angle=True)
    elif st == "HDG":
        dev_att = num(att, "deviation")
        mheading = num(att, "mheading")
        sensor = None if mheading is None else mheading - (dev_att or 0.0)
        cmp_val(p, d, "heading", v["heading"], sensor, angle=True)
        if dev_att is None:
            if v["deviation_raw"] != ("", ""):
                p.append("deviation %s,%s present but the ATT has no deviation (must be empty)" % v["deviation_raw"])
        elif v["deviation_raw"] == ("", ""):
            p.append("deviation empty but the ATT has deviation %s" % dev_att)
        else:
            dev, dev_dir = v["deviation_raw"]
            signed = float(dev) * (-1.0 if dev_dir == "W" else 1.0)
            cmp_val(p, d, "deviation", signed, dev_att)
            if dev_dir != ("E" if dev_att >= 0 else "W") and abs(dev_att) >= 0.05:
                p.append("deviation direction %s for deviation %s" % (dev_dir, dev_att))
        decl = num(att, "declination")
        if decl is None:
            if v["variation"] is not None:
                p.append("variation %s,%s present but the ATT has no declination (must be empty)"
                         % (v["var_raw"], v["var_dir"]))
        elif v["variation"] is None:
            p.append("variation empty but the ATT has declination %s" % decl)
        else:
            cmp_val(p, d, "variation", v["variation"], abs(decl))
            want = "E" if decl >= 0 else "W"
            # A declination that rounds to 0.0 may carry either letter.
            if v["var_dir"] != want and abs(decl) >= 0.05:
                p.append("variation direction %s, declination %s wants %s" % (v["var_dir"], decl, want))
    elif st == "ROT":
        rot = num(att, "rot")
        if rot is None:
            if v["status"] != "V" or v["rate"] is not None:
                p.append("ATT has no rot: expected ',V' (empty rate, status V), got %r,%s"
                         % ("" if v["rate"] is None else v["rate"], v["status"]))
        else:
            if v["status"] != "A":
                p.append("status %s but the ATT has rot %s (expected A)" % (v["status"], rot))
            if v["rate"] is None:
                p.append("rate empty but the ATT has rot %s" % rot)
            else:
                cmp_val(p, d, "rate", v["rate"], rot)
    elif st == "XDR":
        if v["pitch"] is not None:
            cmp_val(p, d, "pitch", v["pitch"], num(att, "pitch"))
        if v["roll"] is not None:
            cmp_val(p, d, "roll", v["roll"], num(att, "roll"))
    return p, d


def match_tpv(v, tpv, magvar_refs):
    p, d = [], {}
    t = tpv.get("time")
    if not isinstance(t, str):
        return ["TPV has no time"], d
    try:
        _, tt = parse_iso(t)
    except ValueError as e:
        return [str(e)], d
    quantum = Decimal(10) ** -v["time_digits"]
    dt = abs(v["time"] - tt)
    d["time"] = float(dt)
    if not dt < quantum:   # equal at the sentence's precision, truncated or rounded
        p.append("time %s vs %s" % (v["time_raw"], t))
        return p, d        # a different epoch: the rest would only add noise
    mode = tpv.get("mode") if isinstance(tpv.get("mode"), int) else 0
    want = "A" if mode >= 2 else "V"
    if v["status"] != want:
        p.append("status %s but TPV mode %s (expected %s)" % (v["status"], mode, want))
    if v["mode"] is not None and (v["mode"] == "N") != (mode < 2):
        p.append("mode indicator %s but TPV mode %s" % (v["mode"], mode))
    fix = mode >= 2
    for key, jkey, tol, angle, scale in (("lat", "lat", LATLON_TOL, False, 1.0),
                                         ("lon", "lon", LATLON_TOL, False, 1.0),
                                         ("sog", "speed", TOL, False, KNOTS_PER_MPS),
                                         ("cog", "track", TOL, True, 1.0)):
        ref = num(tpv, jkey)
        if v[key] is None:
            if ref is not None and fix:
                p.append("%s empty but TPV %s is %s" % (key, jkey, ref))
            continue
        cmp_val(p, d, key, v[key], None if ref is None else ref * scale,
                angle=angle, tol=tol)
    if v["magvar"] is not None:
        refs = [r for r in magvar_refs if r is not None]
        if refs:
            best = min(refs, key=lambda r: abs(v["magvar"] - r))
            cmp_val(p, d, "magvar", v["magvar"], best)
    return p, d


# --------------------------------------------------------------------------- #
# Inputs
# --------------------------------------------------------------------------- #

def read_sentences(path):
    """[(line number, text without CRLF or None, framing problems)]."""
    with open(path, "rb") as fh:
        data = fh.read()
    parts = data.split(b"\n")
    out = []
    trailing = parts and parts[-1] == b""
    if trailing:
        parts.pop()
    for i, body in enumerate(parts, 1):
        has_lf = trailing or i < len(parts)
        full = body + (b"\n" if has_lf else b"")
        probs = []
        if not full.endswith(b"\r\n"):
            probs.append("does not end with CR LF")
        if len(full) > MAX_LEN:
            probs.append("%d bytes with CR LF, over %d" % (len(full), MAX_LEN))
        if not body.startswith(b"$"):
            probs.append("does not start with '$'")
        text = body[:-1] if body.endswith(b"\r") else body
        if any(c < 0x20 or c > 0x7E for c in text):
            probs.append("has bytes outside printable ASCII")
        out.append((i, text.decode("ascii", "replace"), probs))
    return out


def read_json(path):
    """(all objects [(line, obj)], {'ATT': [index...], 'TPV': [...]})."""
    objs, idx = [], {"ATT": [], "TPV": []}
    with open(path, "r", encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            line = line.strip()
            if not line:
                continue
            try:
                o = json.loads(line)
            except ValueError as e:
                raise ValueError("%s:%d: not JSON: %s" % (path, n, e))
            if not isinstance(o, dict):
                raise ValueError("%s:%d: not a JSON object" % (path, n))
            cls = o.get("class")
            if cls in idx:
                idx[cls].append(len(objs))
            objs.append((n, o))
    return objs, idx


def short(o, limit=240):
    s = json.dumps(o, separators=(",", ":"))
    return s if len(s) <= limit else s[:limit] + "..."


# --------------------------------------------------------------------------- #

class Matcher:
    """Ordered matching of one class's sentences to that class's JSON objects.

    Greedy: each sentence takes the first object at or after the pointer that it
    matches, and the pointer moves there (not past it).  On a clean stream this
    never fails.  When a sentence finds no match, up to BACKTRACK earlier matched
    sentences are tried as the culprit: if dropping one of them lets it and every
    sentence after it match from where the pointer stood before it, that one is
    the failure (a wrong sentence that happened to match an object far ahead),
    not the dozens of good sentences after it.
    """
    BACKTRACK = 3
    MAX_BACKTRACKS = 200      # bounded work on a badly broken stream

    def __init__(self, cls, objs, seq, att_pos):
        self.cls, self.objs, self.seq, self.att_pos = cls, objs, seq, att_pos
        self.pointer = 0
        self.matched = []     # [sentence, k, pointer_before, diffs]
        self.failed = []      # (sentence, why, detail lines)
        self.backtracks = 0

    def compare(self, s, gi):
        obj = self.objs[gi][1]
        if self.cls == "ATT":
            return match_att(s["type"], s["values"], obj)
        b = bisect.bisect_left(self.att_pos, gi)
        near = [self.objs[self.att_pos[j]][1] for j in (b - 1, b) if 0 <= j < len(self.att_pos)]
        refs = [num(a, "declination") for a in near] + [num(obj, "magvar")]
        return match_tpv(s["values"], obj, refs)

    def find(self, s, start, stop=None):
        """(k, diffs) of the first match in seq[start:stop], or (None, (first, closest, last))."""
        first = best = last = None
        stop = len(self.seq) if stop is None else min(stop, len(self.seq))
        for k in range(start, stop):
            p, d = self.compare(s, self.seq[k])
            if not p:
                return k, d
            # A candidate from another epoch (RMC time differs) is never the closest.
            rank = len(p) + (100 if p[0].startswith("time ") else 0)
            cand = (self.seq[k], p, sum(d.values()), rank)
            if first is None:
                first = cand
            if best is None or (rank, cand[2]) < (best[3], best[2]):
                best = cand
            last = cand
        return None, (first, best, last)

    def diag(self, cands):
        out = []
        shown = set()
        for label, c in zip(("first", "closest", "last"), cands):
            if c is not None and c[0] not in shown:
                shown.add(c[0])
                out.append("%s candidate (JSON line %d): %s" % (label, self.objs[c[0]][0], "; ".join(c[1])))
                out.append("    %s" % short(self.objs[c[0]][1]))
        return out

    def add(self, s):
        k, r = self.find(s, self.pointer)
        if k is not None:
            self.matched.append([s, k, self.pointer, r])
            self.pointer = k
            return
        if self.backtracks < self.MAX_BACKTRACKS:
            self.backtracks += 1
            for depth in range(1, min(self.BACKTRACK, len(self.matched)) + 1):
                culprit = self.matched[-depth]
                ptr, redo = culprit[2], []
                for t in [m[0] for m in self.matched[len(self.matched) - depth + 1:]] + [s]:
                    k2, d2 = self.find(t, ptr, culprit[1])
                    if k2 is None:
                        break
                    redo.append([t, k2, ptr, d2])
                    ptr = k2
                else:
                    _, cands = self.find(culprit[0], culprit[2], ptr + 1)
                    self.failed.append((culprit[0],
                        "matched only JSON line %d, %d %s objects past the pointer; the %d sentence(s) "
                        "after it match earlier objects, so this one does not fit" % (
                            self.objs[self.seq[culprit[1]]][0], culprit[1] - culprit[2], self.cls, len(redo)),
                        self.diag(cands)))
                    del self.matched[-depth:]
                    self.matched.extend(redo)
                    self.pointer = ptr
                    return
        start = self.pointer
        if r[0] is None:
            why = "no %s object at or after the pointer (%d of %d used)" % (self.cls, start, len(self.seq))
        else:
            why = "no %s object from JSON line %d to the end matches (%d candidates)" % (
                self.cls, self.objs[r[0][0]][0], len(self.seq) - start)
        self.failed.append((s, why, self.diag(r)))


def main(argv=None):
    ap = argparse.ArgumentParser(description="Check Bearing's NMEA 0183 sentences against its gpsd JSON.")
    ap.add_argument("sentences", metavar="SENTENCES_FILE")
    ap.add_argument("json", metavar="JSON_FILE")
    ap.add_argument("--report", metavar="OUT.json", help="write counts and max differences as JSON")
    ap.add_argument("--talker", metavar="ID", help="require this talker ID on every sentence (e.g. HC)")
    args = ap.parse_args(argv)      # exits 2 on usage errors

    try:
        import pynmea2
    except ImportError as e:
        print("check_nmea: SKIP: pynmea2 cannot be imported (%s); install python3-nmea2 "
              "or pip install pynmea2" % e)
        return EXIT_SKIP
    version = getattr(pynmea2, "version", None) or getattr(pynmea2, "__version__", "?")

    try:
        lines = read_sentences(args.sentences)
        objs, idx = read_json(args.json)
    except (OSError, ValueError) as e:
        print("check_nmea: error: %s" % e, file=sys.stderr)
        return EXIT_USAGE

    counts = {t: 0 for t in ALL_TYPES}
    talkers = {}
    failures = []           # (line, kind, sentence, why, detail)
    matchers = {c: Matcher(c, objs, idx[c], idx["ATT"]) for c in ("ATT", "TPV")}

    for lineno, text, probs in lines:
        st = None
        try:
            if probs:
                raise Malformed("; ".join(probs))
            fm = FRAME_RE.match(text)
            if not fm:
                raise Malformed("not $TTSSS,fields*HH with an upper-case hex checksum")
            try:
                msg = pynmea2.parse(text, check=True)
            except Exception as e:   # ChecksumError, ParseError, SentenceTypeError, ...
                raise Malformed("pynmea2.parse(check=True): %s: %s" % (type(e).__name__, e))
            st = getattr(msg, "sentence_type", None)
            if st not in ALL_TYPES:
                raise Malformed("sentence type %r is not one the door sends" % st)
            talker = msg.talker
            if args.talker and talker != args.talker:
                raise Malformed("talker %r, expected %r" % (talker, args.talker))
            fields = fm.group(3).split(",")
            if list(msg.data) != fields:
                raise Malformed("pynmea2 data %r differs from the raw fields %r" % (msg.data, fields))
            v = decode(msg, st, fields)
        except Malformed as e:
            if st in counts:
                counts[st] += 1
            failures.append((lineno, "malformed", text, str(e), []))
            continue
        counts[st] += 1
        talkers[talker] = talkers.get(talker, 0) + 1
        s = {"line": lineno, "text": text, "type": st, "values": v}
        matchers["TPV" if st in TPV_TYPES else "ATT"].add(s)

    max_diff, max_field, advanced = {}, {}, {}
    for cls, m in matchers.items():
        for s, why, detail in m.failed:
            failures.append((s["line"], "mismatch", s["text"], why, detail))
        advanced[cls] = sum(k - p for _, k, p, _ in m.matched)
        for s, _, _, d in m.matched:
            st = s["type"]
            for f, x in d.items():
                if f != "time":
                    max_diff[st] = max(max_diff.get(st, 0.0), x)
                key = "%s.%s" % (st, f)
                max_field[key] = max(max_field.get(key, 0.0), x)
            max_diff.setdefault(st, 0.0)
    failures.sort(key=lambda f: f[0])
    malformed = sum(1 for f in failures if f[1] == "malformed")
    mismatched = len(failures) - malformed

    for lineno, kind, text, why, detail in failures[:MAX_DETAILED]:
        print("FAIL %s line %d: %s" % (kind, lineno, text))
        print("     %s" % why)
        for e in detail:
            print("     %s" % e)
    if len(failures) > MAX_DETAILED:
        print("... %d more failures not shown" % (len(failures) - MAX_DETAILED))

    n = len(lines)
    ok = n > 0 and not failures
    if n == 0:
        print("check_nmea: no sentences in %s" % args.sentences)
    parts = ", ".join("%s %d" % (t, counts[t]) for t in ALL_TYPES)
    print("check_nmea: %d sentences (%s), %d malformed, %d mismatched, pynmea2 %s"
          % (n, parts, malformed, mismatched, version))

    if args.report:
        rep = {
            "sentences": n,
            "by_type": counts,
            "talkers": talkers,
            "malformed": malformed,
            "mismatched": mismatched,
            "passed": ok,
            "pynmea2": version,
            "json_objects": {"ATT": len(idx["ATT"]), "TPV": len(idx["TPV"]), "all": len(objs)},
            "pointer_advanced": advanced,
            "max_abs_diff": {t: round(max_diff[t], 6) for t in ALL_TYPES if t in max_diff},
            "max_abs_diff_by_field": {k: round(x, 9) for k, x in sorted(max_field.items())},
            "units": {"HDT/HDM/HDG/XDR/RMC.cog/RMC.magvar": "deg", "ROT.rate": "deg/min",
                      "RMC.sog": "knots", "RMC.lat/lon": "deg", "RMC.time": "s"},
            "failures": [{"line": l, "kind": k, "sentence": t, "why": w, "detail": d}
                         for l, k, t, w, d in failures[:200]],
        }
        if not write_report(args.report, rep, "check_nmea"):
            return EXIT_USAGE
    return EXIT_OK if ok else EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
