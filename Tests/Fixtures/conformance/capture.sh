#!/bin/sh
# Makes gpsd-RELEASE/NAME.log.chk for every ../shared/data/gpsd/NAME.log with the gpsd installed here,
# the way gpsd's regression suite made the 3.22 .chk files beside the logs (`gpsfake -s 38400 -1 -p`),
# keeping only its TPV and SKY lines, which is what the test compares (the logs' own NMEA, which gpsfake echoes,
# stays in ../shared; DEVICE lines carry the capture's wall-clock time).
# ConformanceTests picks the directory by `gpsd -V`. For Debian 13's gpsd 3.25: scripts/trixie run sh
# Tests/Fixtures/conformance/capture.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
logs=${BEARING_SHARED_DATA:-$here/../../../../shared/data}/gpsd
release=$(gpsd -V | awk '{print $2}')
case "$release" in 3.22*) echo "capture.sh: gpsd 3.22's files are the ones in $logs" >&2; exit 2 ;; esac
out="$here/gpsd-$release"
mkdir -p "$out"
for log in "$logs"/*.log; do
    name=$(basename "$log")
    gpsfake -s 38400 -1 -p "$log" 2>/dev/null | grep -E '^\{"class":"(TPV|SKY)"' > "$out/$name.chk"
    echo "$name: $(grep -c '"class":"TPV"' "$out/$name.chk") TPVs, $(grep -c '"class":"SKY"' "$out/$name.chk") SKYs" >&2
done
