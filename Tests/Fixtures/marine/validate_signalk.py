#!/usr/bin/env python3
"""Validate Bearing's Signal K deltas against the Signal K specification's JSON schemas.

Usage:
    validate_signalk.py SCHEMA_DIR DELTAS_FILE [--report OUT.json] [--allow-no-context]

SCHEMA_DIR is the specification's schemas/ folder (draft-04; delta.json,
definitions.json, groups/*.json, ...).  DELTAS_FILE is NDJSON, one delta a
line, as Bearing sends them.  Every line must be

  (a) valid against delta.json.  $refs between the schema files resolve from
      the files in SCHEMA_DIR (keyed by file URI and by each file's "id");
      nothing is fetched over the network.  Bearing's own rule on top: a
      delta names its "context" (the schema leaves it optional; see
      --allow-no-context).  Non-finite numbers (NaN, Infinity) are refused.
  (b) for each {path, value} of each update: the path must exist in the
      group's schema (groups/navigation.json for navigation.*, following
      nested properties and $refs, e.g. navigation.attitude), and the value
      must validate against the schema of that property's "value" member
      (Signal K's leaf objects - numberValue, position, attitude, ... - are
      {value, timestamp, $source}; a delta carries the bare value).  The
      units the schema declares for the path are collected and reported, and
      for the paths Bearing sends they must be the SI units Bearing converts
      to (headings, variation, COG, attitude roll/pitch/yaw: rad; rateOfTurn:
      rad/s; speedOverGround: m/s; position: deg).
  (c) in the ranges the schema does not state: headings and courses in
      [0, 2*pi), magneticVariation and roll in [-pi, pi], pitch in
      [-pi/2, pi/2], yaw in [-2*pi, 2*pi], speedOverGround >= 0, latitude in
      [-90, 90], longitude in [-180, 180]; an update "timestamp" must be an
      RFC 3339 UTC time ("...Z") that exists on the calendar.

A server "hello" line ({"version", "roles", ...}, as signalk-server's TCP
interface sends first) is validated against hello.json and counted apart.

Prints one line per failure and a summary
    validate_signalk: N deltas, M values, K invalid
Exit status: 0 all valid; 1 any invalid delta (or none at all); 2 usage or
input errors (unreadable files, SCHEMA_DIR without delta.json); 77 jsonschema
cannot be imported (skip).  Stdlib + jsonschema (4.10.3 with RefResolver, or a
newer one with the referencing library).
"""

import argparse
import datetime
import json
import math
import os
import re
import sys
import warnings
from urllib.parse import unquote, urldefrag, urljoin

from report import write_report  # beside this script

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_SKIP = 0, 1, 2, 77
MAX_DETAILED = 50
TWO_PI = 2.0 * math.pi

# Units the paths Bearing sends must have in the schema (SI, as Bearing converts).
EXPECTED_UNITS = {
    "navigation.headingMagnetic": "rad",
    "navigation.headingTrue": "rad",
    "navigation.headingCompass": "rad",
    "navigation.magneticVariation": "rad",
    "navigation.magneticDeviation": "rad",
    "navigation.courseOverGroundTrue": "rad",
    "navigation.courseOverGroundMagnetic": "rad",
    "navigation.rateOfTurn": "rad/s",
    "navigation.speedOverGround": "m/s",
    "navigation.attitude": {"roll": "rad", "pitch": "rad", "yaw": "rad"},
    "navigation.position": {"latitude": "deg", "longitude": "deg"},
}

# Ranges where the schema is silent: (low, high, high_inclusive).
HEADING = (0.0, TWO_PI, False)
RANGES = {
    "navigation.headingMagnetic": HEADING,
    "navigation.headingTrue": HEADING,
    "navigation.headingCompass": HEADING,
    "navigation.courseOverGroundTrue": HEADING,
    "navigation.courseOverGroundMagnetic": HEADING,
    "navigation.magneticVariation": (-math.pi, math.pi, True),
    "navigation.magneticDeviation": (-math.pi, math.pi, True),
    "navigation.speedOverGround": (0.0, math.inf, True),
    "navigation.attitude.roll": (-math.pi, math.pi, True),
    "navigation.attitude.pitch": (-math.pi / 2, math.pi / 2, True),
    "navigation.attitude.yaw": (-TWO_PI, TWO_PI, True),
    "navigation.position.latitude": (-90.0, 90.0, True),
    "navigation.position.longitude": (-180.0, 180.0, True),
}

TIMESTAMP_RE = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?Z$")


class SchemaError(Exception):
    """SCHEMA_DIR is unusable (exit 2)."""


# --------------------------------------------------------------------------- #
# The schema store: every *.json under SCHEMA_DIR by file URI and by its "id".
# --------------------------------------------------------------------------- #

class Store:
    def __init__(self, root):
        self.root = os.path.abspath(root)
        self.docs = {}          # URI without fragment -> document
        self.notes = []
        by_dir = {}
        for dirpath, _, files in os.walk(self.root):
            for name in sorted(files):
                if not name.endswith(".json"):
                    continue
                path = os.path.join(dirpath, name)
                try:
                    with open(path, encoding="utf-8") as fh:
                        doc = json.load(fh)
                except (OSError, ValueError) as e:
                    raise SchemaError("%s: %s" % (path, e))
                self.docs[self.file_uri(path)] = doc
                by_dir.setdefault(dirpath, []).append((name, doc))
        # Register the "id" URIs too: draft-04 resolves a $ref against the id of the
        # document it sits in (delta.json's id is https://signalk.org/...).  A file whose
        # id does not end in its own name (sar.json carries aton.json's id) is not
        # registered under it; a file without an id (geojson's crs.json) gets its
        # folder's id base.
        for dirpath, entries in by_dir.items():
            base = None
            for name, doc in entries:
                ident = doc.get("id") if isinstance(doc, dict) else None
                if not isinstance(ident, str):
                    continue
                url = urldefrag(ident)[0]
                if url.rsplit("/", 1)[-1] == name:
                    self.docs.setdefault(url, doc)
                    base = base or url[: -len(name)]
                else:
                    self.notes.append("%s has id %s (another file's); not registered under it"
                                      % (os.path.relpath(os.path.join(dirpath, name), self.root), ident))
            if base:
                for name, doc in entries:
                    self.docs.setdefault(base + name, doc)

    @staticmethod
    def file_uri(path):
        return "file://" + os.path.abspath(path).replace(os.sep, "/")

    def uri(self, rel):
        return self.file_uri(os.path.join(self.root, rel))

    def has(self, rel):
        return self.uri(rel) in self.docs

    def get(self, url):
        """The node at url (with a JSON pointer fragment)."""
        base, frag = urldefrag(url)
        if base not in self.docs:
            raise KeyError("no schema %s in SCHEMA_DIR (no network look-ups)" % base)
        node = self.docs[base]
        for part in [p for p in unquote(frag).split("/") if p != ""]:
            part = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, list):
                node = node[int(part)]
            else:
                node = node[part]
        return node

    def deref(self, url, node):
        """Follow $ref chains: (url, node, units seen on the way, outermost first)."""
        units = []
        seen = set()
        while isinstance(node, dict) and "$ref" in node:
            if "units" in node:
                units.append(node["units"])
            if url in seen:
                raise SchemaError("$ref loop at %s" % url)
            seen.add(url)
            url = urljoin(url, node["$ref"])
            node = self.get(url)
        if isinstance(node, dict) and "units" in node:
            units.append(node["units"])
        return url, node, units


def ptr(url, *parts):
    base, frag = urldefrag(url)
    frag = frag or ""
    for p in parts:
        frag += "/" + str(p).replace("~", "~0").replace("/", "~1")
    return base + "#" + frag


def make_validator_factory(store):
    """A function schema -> Draft 4 validator whose $refs resolve from the store only."""
    import jsonschema
    Draft4 = jsonschema.Draft4Validator

    def refuse(uri):
        raise ValueError("refusing to fetch %s: not in SCHEMA_DIR (no network)" % uri)

    try:        # jsonschema >= 4.18: the referencing library
        import referencing
        import referencing.jsonschema
        from referencing.exceptions import NoSuchResource
        import inspect
        if "registry" not in inspect.signature(Draft4.__init__).parameters:
            raise ImportError("this jsonschema takes no registry")

        def retrieve(uri):
            raise NoSuchResource(ref=uri)

        resources = [(u, referencing.Resource.from_contents(
            d, default_specification=referencing.jsonschema.DRAFT4)) for u, d in store.docs.items()]
        registry = referencing.Registry(retrieve=retrieve).with_resources(resources)

        def factory(schema):
            return Draft4(schema, registry=registry)
        return factory, "referencing"
    except ImportError:
        pass

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        RefResolver = jsonschema.RefResolver

    def factory(schema):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            resolver = RefResolver(base_uri="", referrer=schema,
                                   store=dict(store.docs),
                                   handlers={"http": refuse, "https": refuse, "ftp": refuse})
            return Draft4(schema, resolver=resolver)
    return factory, "RefResolver"


# --------------------------------------------------------------------------- #
# Paths: where a Signal K path sits in the group schemas, and its value schema.
# --------------------------------------------------------------------------- #

class PathIndex:
    def __init__(self, store, factory):
        self.store, self.factory = store, factory
        self.cache = {}

    def _child(self, url, node, name, depth=0):
        url, node, _ = self.store.deref(url, node)
        if not isinstance(node, dict) or depth > 8:
            return None
        props = node.get("properties")
        if isinstance(props, dict) and name in props:
            return ptr(url, "properties", name)
        for kw in ("allOf", "anyOf", "oneOf"):
            for i, sub in enumerate(node.get(kw) or []):
                found = self._child(ptr(url, kw, i), sub, name, depth + 1)
                if found:
                    return found
        for pat in (node.get("patternProperties") or {}):
            if re.search(pat, name):
                return ptr(url, "patternProperties", pat)
        return None

    def _value_schema(self, url, node, depth=0):
        """A schema for the bare delta value of the leaf at url, or None (unconstrained / branch)."""
        url, node, _ = self.store.deref(url, node)
        if not isinstance(node, dict) or depth > 8:
            return None
        parts = []
        props = node.get("properties")
        if isinstance(props, dict) and "value" in props:
            parts.append({"$ref": ptr(url, "properties", "value")})
        for i, sub in enumerate(node.get("allOf") or []):
            s = self._value_schema(ptr(url, "allOf", i), sub, depth + 1)
            if s:
                parts.append(s)
        for kw in ("anyOf", "oneOf"):
            alts = [self._value_schema(ptr(url, kw, i), sub, depth + 1)
                    for i, sub in enumerate(node.get(kw) or [])]
            if alts and all(alts):          # an alternative without a value member leaves it free
                parts.append({"anyOf": alts})
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else {"allOf": parts}

    def _value_units(self, url, node, depth=0):
        """Units declared inside an object value's properties (attitude, position)."""
        url, node, _ = self.store.deref(url, node)
        out = {}
        if not isinstance(node, dict) or depth > 8:
            return out
        props = node.get("properties")
        if isinstance(props, dict) and isinstance(props.get("value"), dict):
            vurl, vnode, _ = self.store.deref(ptr(url, "properties", "value"), props["value"])
            for k, sub in (vnode.get("properties") or {}).items():
                _, snode, su = self.store.deref(ptr(vurl, "properties", k), sub)
                if su:
                    out[k] = su[0]
        for kw in ("allOf", "anyOf", "oneOf"):
            for i, sub in enumerate(node.get(kw) or []):
                for k, u in self._value_units(ptr(url, kw, i), sub, depth + 1).items():
                    out.setdefault(k, u)
        return out

    def lookup(self, path):
        """{'ok', 'why', 'units', 'validator', 'schema_url'} for a delta path."""
        if path in self.cache:
            return self.cache[path]
        r = self._lookup(path)
        self.cache[path] = r
        return r

    def _lookup(self, path):
        segs = path.split(".") if isinstance(path, str) else []
        if not segs or any(s == "" for s in segs):
            return {"ok": False, "why": "path %r is empty or has an empty segment" % (path,)}
        group = "groups/%s.json" % segs[0]
        if len(segs) < 2 or not re.match(r"^[A-Za-z0-9]+$", segs[0]) or not self.store.has(group):
            return {"ok": False, "why": "path %r: no group schema %s in SCHEMA_DIR" % (path, group)}
        url = self.store.uri(group) + "#"
        node = self.store.get(url)
        units = []
        for i, seg in enumerate(segs[1:], 1):
            found = self._child(url, node, seg)
            if not found:
                return {"ok": False, "why": "path %r: %r is not a property of %s in %s" % (
                    path, seg, ".".join(segs[:i]), group)}
            url = found
            node = self.store.get(url)
        _, leaf, units = self.store.deref(url, node)
        vs = self._value_schema(url, node)
        if vs is None:
            if isinstance(leaf, dict) and ("properties" in leaf or "patternProperties" in leaf):
                return {"ok": False, "why": "path %r is a branch of %s (no value member): send its leaves"
                        % (path, group)}
            vs = {"$ref": url}               # a plain typed property: the value itself
        unit = units[0] if units else None
        if unit is None and isinstance(vs, dict) and "$ref" in vs:
            _, vnode, vu = self.store.deref(vs["$ref"], self.store.get(vs["$ref"]))
            unit = vu[0] if vu else None     # e.g. navigation.datetime's "RFC 3339 (UTC)"
        inner = self._value_units(url, node)
        if inner:
            unit = inner if unit is None else {"": unit, **inner}
        return {"ok": True, "units": unit, "validator": self.factory(vs), "schema_url": url}


# --------------------------------------------------------------------------- #

def no_constants(token):
    raise ValueError("non-finite number %s (JSON has none)" % token)


def check_timestamp(ts):
    m = TIMESTAMP_RE.match(ts) if isinstance(ts, str) else None
    if not m:
        return "timestamp %r is not RFC 3339 UTC (YYYY-MM-DDThh:mm:ss[.s]Z)" % (ts,)
    y, mo, d, h, mi, s = (int(x) for x in m.groups()[:6])
    try:
        datetime.datetime(y, mo, d, h, mi, min(s, 59))   # 60: a leap second is allowed
        if s > 60:
            raise ValueError("second %d" % s)
    except ValueError as e:
        return "timestamp %r is not a real time: %s" % (ts, e)
    return None


def in_range(key, x):
    r = RANGES.get(key)
    if r is None or not isinstance(x, (int, float)) or isinstance(x, bool):
        return None
    lo, hi, hi_incl = r
    if not math.isfinite(x) or x < lo or (x > hi if hi_incl else x >= hi):
        return "%s = %r outside %s%g, %g%s" % (key, x, "[", lo, hi, "]" if hi_incl else ")")
    return None


def err_text(e):
    where = "/".join(str(p) for p in e.absolute_path)
    return "%s%s" % ("at /%s: " % where if where else "", e.message)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Validate Signal K deltas against the specification's schemas.")
    ap.add_argument("schema_dir", metavar="SCHEMA_DIR")
    ap.add_argument("deltas", metavar="DELTAS_FILE")
    ap.add_argument("--report", metavar="OUT.json", help="write counts, units by path and failures as JSON")
    ap.add_argument("--allow-no-context", action="store_true",
                    help="accept deltas without 'context' (the schema allows it; Bearing always sends one)")
    args = ap.parse_args(argv)       # exits 2 on usage errors

    try:
        import jsonschema  # noqa: F401
    except ImportError as e:
        print("validate_signalk: SKIP: jsonschema cannot be imported (%s); install python3-jsonschema" % e)
        return EXIT_SKIP
    try:
        from importlib.metadata import version as _v
        js_version = _v("jsonschema")
    except Exception:
        js_version = "?"

    try:
        store = Store(args.schema_dir)
        if not store.has("delta.json"):
            raise SchemaError("%s has no delta.json" % args.schema_dir)
        factory, how = make_validator_factory(store)
        delta_validator = factory({"$ref": store.uri("delta.json")})
        hello_validator = factory({"$ref": store.uri("hello.json")}) if store.has("hello.json") else None
        index = PathIndex(store, factory)
        with open(args.deltas, encoding="utf-8") as fh:
            raw_lines = fh.read().splitlines()
    except (OSError, ValueError, SchemaError) as e:
        print("validate_signalk: error: %s" % e, file=sys.stderr)
        return EXIT_USAGE

    n_deltas = n_values = n_invalid = n_hellos = 0
    failures = []
    paths = {}          # path -> {"count", "units", "min", "max"}
    for lineno, line in enumerate(raw_lines, 1):
        if not line.strip():
            continue
        probs = []
        try:
            delta = json.loads(line, parse_constant=no_constants)
        except ValueError as e:
            probs.append("not JSON: %s" % e)
            delta = None
        if (isinstance(delta, dict) and hello_validator is not None and "updates" not in delta
                and "roles" in delta):
            # A server's hello (signalk-server's TCP interface sends one first): hello.json.
            n_hellos += 1
            try:
                for e in hello_validator.iter_errors(delta):
                    probs.append("hello.json: %s" % err_text(e))
            except Exception as e:
                probs.append("hello.json could not be applied: %s: %s" % (type(e).__name__, e))
            delta = None
        else:
            n_deltas += 1
        if delta is not None:
            # (a) the delta schema
            try:
                for e in sorted(delta_validator.iter_errors(delta), key=lambda e: str(list(e.absolute_path))):
                    probs.append("delta.json: %s" % err_text(e))
            except Exception as e:     # an unresolvable $ref: the schema folder is incomplete
                probs.append("delta.json could not be applied: %s: %s" % (type(e).__name__, e))
            if isinstance(delta, dict):
                if "context" not in delta and not args.allow_no_context:
                    probs.append("no 'context' (Bearing sends e.g. \"vessels.self\")")
                elif "context" in delta and (not isinstance(delta["context"], str) or not delta["context"]):
                    probs.append("context %r is not a non-empty string" % (delta.get("context"),))
                updates = delta.get("updates")
                for ui, up in enumerate(updates if isinstance(updates, list) else []):
                    if not isinstance(up, dict):
                        continue
                    if "timestamp" in up:
                        t = check_timestamp(up["timestamp"])
                        if t:
                            probs.append("updates/%d: %s" % (ui, t))
                    values = up.get("values")
                    for vi, pv in enumerate(values if isinstance(values, list) else []):
                        if not isinstance(pv, dict) or "path" not in pv or "value" not in pv:
                            continue      # delta.json has already said so
                        n_values += 1
                        path, value = pv["path"], pv["value"]
                        where = "updates/%d/values/%d (%s)" % (ui, vi, path)
                        info = index.lookup(path)
                        if not info["ok"]:
                            probs.append("%s: %s" % (where, info["why"]))
                            continue
                        # (b) the value against the property's value member
                        try:
                            for e in info["validator"].iter_errors(value):
                                probs.append("%s: value %s: %s" % (where, json.dumps(value), err_text(e)))
                        except Exception as e:
                            probs.append("%s: schema %s could not be applied: %s: %s" % (
                                where, info["schema_url"], type(e).__name__, e))
                        want = EXPECTED_UNITS.get(path)
                        if want is not None:
                            got = info["units"]
                            if isinstance(want, dict):
                                bad = {k: (got or {}).get(k) if isinstance(got, dict) else got
                                       for k in want if not isinstance(got, dict) or got.get(k) != want[k]}
                                if bad:
                                    probs.append("%s: schema units %r, Bearing sends %r" % (where, bad, want))
                            elif got != want:
                                probs.append("%s: schema units %r, Bearing sends %r" % (where, got, want))
                        # (c) ranges
                        members = value.items() if isinstance(value, dict) else [("", value)]
                        for k, x in members:
                            r = in_range(path + ("." + k if k else ""), x)
                            if r:
                                probs.append("%s: %s" % (where, r))
                        st = paths.setdefault(path, {"count": 0, "units": info["units"]})
                        st["count"] += 1
                        if isinstance(value, (int, float)) and not isinstance(value, bool):
                            st["min"] = min(st.get("min", value), value)
                            st["max"] = max(st.get("max", value), value)
        if probs:
            n_invalid += 1
            failures.append({"line": lineno, "delta": line if len(line) <= 400 else line[:400] + "...",
                             "problems": probs})
            if len(failures) <= MAX_DETAILED:
                print("INVALID line %d: %s" % (lineno, failures[-1]["delta"]))
                for p in probs:
                    print("     %s" % p)
    if len(failures) > MAX_DETAILED:
        print("... %d more invalid deltas not shown" % (len(failures) - MAX_DETAILED))
    for p in sorted(paths):
        print("  %s: %d values, units %s" % (p, paths[p]["count"], json.dumps(paths[p]["units"])))
    if n_deltas == 0:
        print("validate_signalk: no deltas in %s" % args.deltas)
    if n_hellos:
        print("validate_signalk: %d hello message(s) checked against hello.json" % n_hellos)
    print("validate_signalk: %d deltas, %d values, %d invalid" % (n_deltas, n_values, n_invalid))

    ok = n_deltas > 0 and n_invalid == 0
    if args.report:
        rep = {"deltas": n_deltas, "values": n_values, "invalid": n_invalid, "hellos": n_hellos, "passed": ok,
               "jsonschema": js_version, "resolution": how, "schema_dir": store.root,
               "schema_notes": store.notes, "paths": paths, "failures": failures[:200]}
        if not write_report(args.report, rep, "validate_signalk"):
            return EXIT_USAGE
    return EXIT_OK if ok else EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
