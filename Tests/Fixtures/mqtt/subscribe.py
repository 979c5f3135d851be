#!/usr/bin/python3
"""A paho-mqtt subscriber for the MQTT door tests: a persistent session (clean_session False, QoS 1) that
reconnects for ever, writing each message as one line `RETAINED TOPIC PAYLOAD` (RETAINED 1 or 0) to OUTFILE
and flushing it, until SIGTERM. Works with paho-mqtt 1.6 (Debian 12) and 2.x (Debian 13, PyPI).

    subscribe.py PORT TOPIC CLIENT_ID OUTFILE
"""
import signal
import sys

import paho.mqtt.client as mqtt

port, topic, client_id, outfile = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
out = open(outfile, "a", buffering=1, encoding="utf-8")

if hasattr(mqtt, "CallbackAPIVersion"):  # paho-mqtt 2: keep the 1.x callback signatures
    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION1, client_id=client_id, clean_session=False)
else:
    client = mqtt.Client(client_id=client_id, clean_session=False)
client.reconnect_delay_set(min_delay=1, max_delay=1)


def on_connect(c, userdata, flags, rc):
    if rc == 0:
        c.subscribe(topic, qos=1)


def on_message(c, userdata, message):
    payload = message.payload.decode("utf-8", "replace")
    out.write(f"{1 if message.retain else 0} {message.topic} {payload}\n")


def stop(signum, frame):
    client.disconnect()


client.on_connect = on_connect
client.on_message = on_message
signal.signal(signal.SIGTERM, stop)
client.connect_async("127.0.0.1", port, keepalive=10)
client.loop_forever(retry_first_connection=True)
