#!/bin/bash
# Guest script proving the vm-systemd rig (runs inside the VM as root, cwd /vmshare):
#
#   scripts/vm-systemd/run scripts/vm-systemd/smoke.sh [SOME.deb]
#
# Each check prints "SMOKE-STEP <name> ok|FAIL"; at the end /vmshare/out/guest.log gets "SMOKE-OK"
# (or "SMOKE-FAIL <names>") and the script exits 0 only if every step passed. A .deb passed as FILE is
# installed and purged instead of the one the script builds itself.
set -uo pipefail
out="${VMSHARE:-/vmshare}/out"
failed=()

step() { # name command...: runs the command, shows its output, judges it by its exit status
  local name="$1" output
  shift
  output="$("$@" 2>&1)"
  local status=$?
  [ -n "$output" ] && printf '%s\n' "$output"
  if [ "$status" = 0 ]; then
    echo "SMOKE-STEP $name ok"
  else
    echo "SMOKE-STEP $name FAIL (exit $status)"
    failed+=("$name")
  fi
}

version() {
  systemctl --version | head -1
  systemctl --version | head -1 | grep -q '^systemd 2[0-9][0-9] '
}

pid1() {
  local comm
  comm="$(ps -p 1 -o comm=)"
  echo "pid 1: $comm"
  [ "$comm" = systemd ]
}

state() {
  local s
  s="$(systemctl is-system-running --wait)"
  echo "system state: $s"
  if [ "$s" != running ]; then
    systemctl --failed --no-pager
    systemctl list-jobs --no-pager
    return 1
  fi
}

share() {
  ls -la /vmshare
  [ -f /vmshare/guest.sh ] && touch "$out/.probe" && rm "$out/.probe" && [ "$PWD" = /vmshare ] \
    && [ "${VMSHARE:-}" = /vmshare ] && [ "$(id -u)" = 0 ]
}

dpkg_roundtrip() {
  local deb pkg
  deb="$(ls /vmshare/*.deb 2>/dev/null | head -1)"
  if [ -z "$deb" ]; then
    local d
    d="$(mktemp -d)"
    mkdir -p "$d/pkg/DEBIAN" "$d/pkg/usr/share/vm-smoke"
    cat > "$d/pkg/DEBIAN/control" <<'CONTROL'
Package: vm-smoke
Version: 1.0
Architecture: all
Maintainer: vm-systemd <nobody@example.invalid>
Description: vm-systemd smoke test package
CONTROL
    echo hello > "$d/pkg/usr/share/vm-smoke/hello"
    dpkg-deb --root-owner-group --build "$d/pkg" "$d/vm-smoke.deb" || return 1
    deb="$d/vm-smoke.deb"
  fi
  pkg="$(dpkg-deb -f "$deb" Package)"
  echo "package $pkg from $deb"
  dpkg -i "$deb" || return 1
  dpkg -s "$pkg" | grep -q '^Status: install ok installed' || return 1
  dpkg -L "$pkg" | tail -3
  dpkg -P "$pkg" || return 1
  ! dpkg -s "$pkg" >/dev/null 2>&1
}

sysusers() {
  systemd-sysusers --inline 'g vmsmoke - -' 'u vmsmokeuser - "vm-systemd smoke user" /nonexistent' || return 1
  getent group vmsmoke && getent passwd vmsmokeuser || return 1
  local gid
  gid="$(getent group vmsmoke | cut -d: -f3)"
  [ "$gid" -lt 1000 ]
}

users() {
  useradd --system --no-create-home --shell /usr/sbin/nologin vmsmoke2 || return 1
  id vmsmoke2 || return 1
  [ "$(runuser -u vmsmoke2 -- id -un)" = vmsmoke2 ] || return 1
  [ "$(setpriv --reuid=vmsmoke2 --regid=vmsmoke2 --clear-groups id -u)" = "$(id -u vmsmoke2)" ]
}

socket_activation() {
  cat > /run/systemd/system/vm-smoke.socket <<'UNIT'
[Socket]
ListenStream=127.0.0.1:7777
Accept=yes
UNIT
  cat > /run/systemd/system/vm-smoke@.service <<'UNIT'
[Service]
ExecStart=/bin/sh -c 'read -r line; echo "socket-activated: got $line"'
StandardInput=socket
StandardOutput=socket
DynamicUser=yes
UNIT
  systemctl daemon-reload || return 1
  systemctl start vm-smoke.socket || return 1
  systemctl is-active vm-smoke.socket || return 1
  local reply
  reply="$(python3 - <<'PY'
import socket
s = socket.create_connection(("127.0.0.1", 7777), timeout=10)
s.sendall(b"ping\n")
data = b""
while not data.endswith(b"\n"):
    chunk = s.recv(100)
    if not chunk:
        break
    data += chunk
print(data.decode().strip())
PY
)" || return 1
  echo "reply: $reply"
  systemctl stop vm-smoke.socket || return 1
  [ "$reply" = "socket-activated: got ping" ]
}

journal() {
  # This script's own stdout (SyslogIdentifier=guest) is in the journal.
  local line
  line="$(journalctl -b --no-pager -o cat -t guest | grep -m1 '^systemd 2')" || return 1
  echo "journal has this script's line: $line"
}

i2c() {
  modprobe i2c-dev || return 1
  modprobe i2c-stub chip_addr=0x1e || return 1
  i2cdetect -l
  local bus
  bus="$(i2cdetect -l | awk '/SMBus stub driver/ {sub(/^i2c-/, "", $1); print $1; exit}')"
  [ -n "$bus" ] || return 1
  udevadm settle --timeout=20
  ls -l /dev/i2c-*
  i2cset -y "$bus" 0x1e 0x0a 0x48 || return 1
  local v
  v="$(i2cget -y "$bus" 0x1e 0x0a)" || return 1
  echo "i2cget -y $bus 0x1e 0x0a: $v"
  [ "$v" = 0x48 ] || return 1
  if getent group i2c >/dev/null; then
    [ "$(stat -c %G:%a "/dev/i2c-$bus")" = i2c:660 ] || { echo "udev did not give /dev/i2c-$bus root:i2c 0660"; return 1; }
  else
    echo "no i2c group in /etc/group: /dev/i2c-$bus stays root-only"
  fi
}

security() {
  local line
  line="$(systemd-analyze security --no-pager systemd-journald.service | tail -1)"
  echo "$line"
  case "$line" in *"Overall exposure level"*) ;; *) return 1 ;; esac
}

python() {
  python3 -c 'import sys; print("python", sys.version.split()[0])'
}

step version version
step pid1 pid1
step state state
step share share
step dpkg dpkg_roundtrip
step sysusers sysusers
step users users
step socket socket_activation
step journal journal
step i2c i2c
step security security
step python python

if [ ${#failed[@]} = 0 ]; then
  echo SMOKE-OK | tee -a "$out/guest.log"
else
  echo "SMOKE-FAIL ${failed[*]}" | tee -a "$out/guest.log"
  exit 1
fi
