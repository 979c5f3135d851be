#ifndef BEARING_CMOSQUITTO_SHIM_H
#define BEARING_CMOSQUITTO_SHIM_H

#include <mosquitto.h>
#include <mqtt_protocol.h>

/* Bearing uses libmosquitto's client API as it stands from 2.0 on (Debian 12 ships 2.0.11, Debian 13
 * 2.0.21): MQTT 5 with a CONNECT property (Maximum Packet Size), 3.1.1 for a broker that refuses 5,
 * mosquitto_connect_async, the external-loop calls (mosquitto_socket, mosquitto_loop_read, _write, _misc,
 * mosquitto_want_write) and the callbacks whose result is the CONNACK's code. */
#if !defined(LIBMOSQUITTO_MAJOR) || LIBMOSQUITTO_MAJOR < 2
#error "Bearing needs libmosquitto 2.0 or newer"
#endif

static const int bearing_mosq_version_major = LIBMOSQUITTO_MAJOR;
static const int bearing_mosq_version_minor = LIBMOSQUITTO_MINOR;
static const int bearing_mosq_version_revision = LIBMOSQUITTO_REVISION;

/* An asynchronous connect that sends MQTT 5 CONNECT properties. libmosquitto 2.0 has no such call: its
 * mosquitto_connect_bind_v5 blocks in connect(2) (up to the kernel's SYN retries, about two minutes, for a
 * broker that does not answer), and there is no mosquitto_connect_bind_async_v5. But
 * mosquitto_connect_bind_v5 first keeps a copy of the properties on the client (mosq->connect_properties)
 * and only then checks the port, and every later connect of that client sends the copy kept, the
 * asynchronous one too (lib/connect.c of libmosquitto 2.0: mosquitto__reconnect). Called with port -1 it
 * keeps them and refuses to connect (MOSQ_ERR_INVAL), and mosquitto_connect_async then connects without
 * blocking. Any other result of the first call is returned as it is (MOSQ_ERR_SUCCESS, which would mean
 * it connected to port -1, as MOSQ_ERR_UNKNOWN); FleetPacketBoundTests fails if the property is not sent. */
static inline int bearing_mosq_connect_async_v5(struct mosquitto *mosq, const char *host, int port, int keepalive,
                                                const mosquitto_property *properties)
{
    int rc = mosquitto_connect_bind_v5(mosq, host, -1, keepalive, NULL, properties);
    if (rc != MOSQ_ERR_INVAL) {
        return rc == MOSQ_ERR_SUCCESS ? MOSQ_ERR_UNKNOWN : rc;
    }
    return mosquitto_connect_async(mosq, host, port, keepalive);
}

#endif
