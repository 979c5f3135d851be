#ifndef BEARING_CMOSQUITTO_SHIM_H
#define BEARING_CMOSQUITTO_SHIM_H

#include <mosquitto.h>

/* Bearing uses libmosquitto's MQTT 3.1.1 client API as it stands from 1.6 on (Debian 12 ships 2.0.11,
 * Debian 13 2.0.21): mosquitto_connect, the external-loop calls (mosquitto_socket, mosquitto_loop_read,
 * _write, _misc, mosquitto_want_write) and the v3 callbacks. */
#if !defined(LIBMOSQUITTO_MAJOR) || LIBMOSQUITTO_MAJOR < 2
#error "Bearing needs libmosquitto 2.0 or newer"
#endif

static const int bearing_mosq_version_major = LIBMOSQUITTO_MAJOR;
static const int bearing_mosq_version_minor = LIBMOSQUITTO_MINOR;
static const int bearing_mosq_version_revision = LIBMOSQUITTO_REVISION;

#endif
