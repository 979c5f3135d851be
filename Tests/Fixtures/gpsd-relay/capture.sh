#!/bin/sh
# Regenerate <name>.expected.jsonl from <name>.log with the gpsd installed here: this directory holds
# gpsd 3.22's, gpsd-RELEASE/ another release's (GpsdRelayTests picks by `gpsd -V`). For Debian 13's 3.25:
#   scripts/trixie run sh Tests/Fixtures/gpsd-relay/capture.sh Tests/Fixtures/gpsd-relay/gpsd-3.25
# Usage: sh capture.sh [OUTDIR]   (default: this directory)
#        ALLDIR=/some/dir sh capture.sh   also keeps every received line
#                                         as ALLDIR/<name>.all.jsonl
# Pipe mode (-p): gpsfake is itself the client, sends the -r WATCH before
# feeding (it sleeps 1.4 s first), prints every JSON line gpsd sends it,
# and exits when the log is exhausted - no port, no race, no timeout.
# .expected.jsonl keeps only ATT/GST/PPS/TOFF lines, verbatim, each still
# ending in gpsd's CRLF.  ~12 s per log.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
watch='?WATCH={"enable":true,"json":true,"pps":true,"timing":true}'
for name in heading attitude gst pashr ohpr; do
    gpsfake -1 -p -q -c 0.1 -r "$watch" "$here/$name.log" \
        > "$tmp/$name.all.jsonl" 2>/dev/null
    grep -E '^\{"class":"(ATT|GST|PPS|TOFF)"' "$tmp/$name.all.jsonl" \
        > "$out/$name.expected.jsonl" || true
    if [ -n "${ALLDIR:-}" ]; then cp "$tmp/$name.all.jsonl" "$ALLDIR/"; fi
done
