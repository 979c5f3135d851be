#!/bin/sh
# Records the regression corpus (RegressionCorpusTests): a few seconds of `bearing record` per simulated board
# and vehicle, with a real gpsd under gpsfake — a generated track (`bearing simulate-track`), or for
# `gpsd-attitude` a receiver log whose heading sentences gpsd turns into ATT objects that Bearing relays.
#   sh Tests/Fixtures/regression/record.sh .build/debug/bearing
# then write the expected outputs beside them (and review the diff):
#   BEARING_UPDATE_SNAPSHOTS=1 swift test --filter RegressionCorpusTests
set -eu
here=$(cd "$(dirname "$0")" && pwd)
bearing=${1:?usage: record.sh BEARING-BINARY}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bearing" simulate-track --epochs 60 -o "$tmp/track.nmea"
# record NAME GPSFAKE-LOG MODULE [CONFIG-LINE]
record() {
    port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    gpsfake -1 -p -q -P "$port" -c 0.25 "$2" >/dev/null 2>&1 &
    fake=$!
    sleep 2
    printf 'gpsd: {host: 127.0.0.1, port: %s}\nheading: {fallback_position: [50.8, -1.1]}\n%s\n' "$port" "${4:-}" > "$tmp/c.yaml"
    "$bearing" record --board simulator --module "$3" --config "$tmp/c.yaml" --duration 4 "$here/$1.bbx"
    kill "$fake" 2>/dev/null || true
    wait "$fake" 2>/dev/null || true
}
record fused-still "$tmp/track.nmea" simulated-qmc5883l
record fused-car "$tmp/track.nmea" simulated-qmc5883l "vehicle: car"
record magnetometer-lis3mdl "$tmp/track.nmea" simulated-lis3mdl
record gpsd-attitude "$here/../gpsd-relay/attitude.log" simulated-ak09916
ls -l "$here"/*.bbx
