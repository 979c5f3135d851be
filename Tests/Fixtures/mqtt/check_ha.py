#!/usr/bin/python3
"""Checks Home Assistant MQTT discovery configs the way HA reads them, for the MQTT door tests.

    check_ha.py MESSAGES.json

MESSAGES.json: {"configs": [{"topic": T, "payload": P, "retained": true}, ...],
                "states": {TOPIC: PAYLOAD, ...}}   (the newest message on each state/attributes topic)

For each config (https://www.home-assistant.io/integrations/mqtt/, sensor.mqtt/, device_tracker.mqtt/):
- the topic is <prefix>/<component>/<node_id>/<object_id>/config with ids of [a-zA-Z0-9_-] (HA's
  discovery TOPIC_MATCHER) and the message is retained;
- the payload is a JSON object with unique_id, a device block with identifiers or connections,
  availability_topic, and the component's required keys: sensor: state_topic; device_tracker:
  state_topic or json_attributes_topic;
- a sensor's value_template, rendered with Jinja2 (HA's template engine) against the newest message on
  its state_topic as value_json, gives a number (an enum sensor: one of its options); a tracker's attributes topic holds latitude and longitude
  (numbers) and gps_accuracy (a number, optional).
Prints one line per config and exits 1 if any check fails.
"""
import json
import re
import sys

import jinja2

data = json.load(open(sys.argv[1], encoding="utf-8"))
topic_re = re.compile(r"^(?P<prefix>[^+#]+)/(?P<component>[a-z_]+)/(?P<node>[a-zA-Z0-9_-]+)/(?P<object>[a-zA-Z0-9_-]+)/config$")
env = jinja2.Environment()
failures = []
unique_ids = set()


def fail(topic, why):
    failures.append(f"{topic}: {why}")


for c in data["configs"]:
    t = c["topic"]
    m = topic_re.match(t)
    if not m:
        fail(t, "not <prefix>/<component>/<node_id>/<object_id>/config with ids of [a-zA-Z0-9_-]")
        continue
    if not c.get("retained"):
        fail(t, "not retained")
    try:
        p = json.loads(c["payload"])
    except ValueError as e:
        fail(t, f"payload is not JSON: {e}")
        continue
    if not isinstance(p, dict):
        fail(t, "payload is not a JSON object")
        continue
    for key in ("name", "unique_id", "availability_topic", "device"):
        if key not in p:
            fail(t, f"no {key}")
    if p.get("unique_id") in unique_ids:
        fail(t, f"unique_id {p.get('unique_id')} twice")
    unique_ids.add(p.get("unique_id"))
    dev = p.get("device", {})
    if not (dev.get("identifiers") or dev.get("connections")):
        fail(t, "device has neither identifiers nor connections")
    component = m.group("component")
    shown = ""
    if component == "sensor":
        st = p.get("state_topic")
        if not st:
            fail(t, "sensor without state_topic")
            continue
        state = data["states"].get(st)
        if state is None:
            fail(t, f"nothing arrived on its state_topic {st}")
            continue
        value = env.from_string(p.get("value_template", "{{ value }}")).render(value_json=json.loads(state), value=state)
        if p.get("device_class") == "enum":
            # sensor.mqtt: an enum sensor's state must be one of its options.
            if value not in p.get("options", []):
                fail(t, f"value_template {p.get('value_template')!r} gives {value!r}, not one of its options {p.get('options')}")
        else:
            try:
                float(value)
            except ValueError:
                fail(t, f"value_template {p.get('value_template')!r} gives {value!r}, not a number")
        shown = f"{p.get('name')} = {value} {p.get('unit_of_measurement', '')} ({p.get('state_class', '-')})"
    elif component == "device_tracker":
        at = p.get("json_attributes_topic")
        if not (p.get("state_topic") or at):
            fail(t, "device_tracker with neither state_topic nor json_attributes_topic")
            continue
        attrs = json.loads(data["states"].get(at, "null") or "null")
        if not isinstance(attrs, dict) or not all(isinstance(attrs.get(k), (int, float)) for k in ("latitude", "longitude")):
            fail(t, f"attributes on {at} lack numeric latitude and longitude: {attrs}")
        elif "gps_accuracy" in attrs and not isinstance(attrs["gps_accuracy"], (int, float)):
            fail(t, "gps_accuracy is not a number")
        shown = f"{p.get('name')} at {attrs}"
    else:
        fail(t, f"unexpected component {component}")
    print(f"ok {t}: {shown}")

for f in failures:
    print("FAIL " + f)
sys.exit(1 if failures else 0)
