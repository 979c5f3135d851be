#ifndef BEARING_CGPS_SHIM_H
#define BEARING_CGPS_SHIM_H

#include <gps.h>
#include <errno.h>

/* Bearing reads gps_data_t fields that exist from libgps API 9 (gpsd 3.20) on:
 * fix.time as a timespec, fix.altHAE/altMSL, fix.status, skyview[] with `used`.
 * Debian 12 ships API 11 (gpsd 3.22), Debian 13 (and Raspberry Pi OS 13) API 14 (gpsd 3.25); the tests
 * run against both. */
#if !defined(GPSD_API_MAJOR_VERSION) || GPSD_API_MAJOR_VERSION < 9
#error "Bearing needs libgps API 9 or newer (gpsd >= 3.20)"
#endif

static const int bearing_gps_api_major = GPSD_API_MAJOR_VERSION;
static const int bearing_gps_api_minor = GPSD_API_MINOR_VERSION;

/* fix.status for a DGPS fix: STATUS_DGPS_FIX up to gpsd 3.22, renamed STATUS_DGPS in 3.23 (same value). */
#if defined(STATUS_DGPS)
static const int bearing_status_dgps = STATUS_DGPS;
#else
static const int bearing_status_dgps = STATUS_DGPS_FIX;
#endif

/* gps_stream is variadic-free but its flag set is what Swift needs spelled out. */
/* WATCH_PPS: gpsd sends PPS and TOFF objects only to watchers that ask for them. */
static inline int bearing_gps_watch_json(struct gps_data_t *data) {
    return gps_stream(data, WATCH_ENABLE | WATCH_JSON | WATCH_PPS, NULL);
}

/* gps_send is variadic: Swift cannot call it. */
static inline int bearing_gps_send(struct gps_data_t *data, const char *request) {
    return gps_send(data, "%s", request);
}

static inline const char *bearing_gps_errstr(int err) {
    return gps_errstr(err);
}

static inline int bearing_errno(void) { return errno; }
static inline void bearing_clear_errno(void) { errno = 0; }

#endif
