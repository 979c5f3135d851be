# The guest script of scripts/vm-arm64/run: runs in the emulated arm64 machine under systemd (as root, cwd
# /vmshare, through scripts/vm-systemd's runner unit), with the arm64 .deb, ./i2c-round.sh and
# scripts/vm-systemd/{suite.sh,reader.py} in /vmshare.
#   1. `apt install ./bearing_*_arm64.deb` on the fresh root, as a Pi owner would (no network: every
#      dependency must already be in the root), and the installed binary is an aarch64 one that runs;
#   2. the kernel-I2C round with that binary (./i2c-round.sh);
#   3. `apt purge`, the groups it made removed again, i2c-stub unloaded: the root as it was for
#   4. scripts/vm-systemd/suite.sh, unchanged (its own dpkg -i, its checks, its purge).
# Prints "ARM64-PHASE-<name>" markers (the host times them), "SUITE-CHECK arm64-<name> PASS|FAIL <detail>" per
# check of its own, "ARM64-DONE passed=N failed=M suite_status=S", and exits non-zero if anything failed.
set -u
share=/vmshare
out=$share/out
mkdir -p "$out"
passed=0
failed=0
check() { # name detail command...
  local name=$1 detail=$2
  shift 2
  if "$@"; then
    echo "SUITE-CHECK arm64-$name PASS $detail"; passed=$((passed + 1))
  else
    echo "SUITE-CHECK arm64-$name FAIL $detail"; failed=$((failed + 1))
  fi
}

echo "ARM64-PHASE-APT $(uname -m) $(uname -r), systemd $(systemctl --version | sed -n '1s/^systemd //p'), $(. /etc/os-release && echo "$PRETTY_NAME")"
deb=$(cd $share && ls bearing_*_arm64.deb)
# What exists before the package: whatever it adds is removed after the purge.
had_bearing_group=$(getent group bearing > /dev/null && echo yes || echo no)
had_i2c_group=$(getent group i2c > /dev/null && echo yes || echo no)
(cd $share && DEBIAN_FRONTEND=noninteractive apt install -y "./$deb") > "$out/apt-install.log" 2>&1
apt_status=$?
sed 's/^/ARM64-NOTE apt: /' "$out/apt-install.log" | grep -v -e 'Reading' -e 'Building' -e 'WARNING: apt does not' -e '^ARM64-NOTE apt: $'
status_arch=$(dpkg-query -W -f '${Status} ${Architecture}' bearing 2>/dev/null)
check apt-install "apt install ./$deb: exit $apt_status, $status_arch" \
  test $apt_status -eq 0 -a "$status_arch" = "install ok installed arm64"
# e_machine at byte 18 of the ELF header: 0xb7 is EM_AARCH64.
machine=$(od -An -tx1 -j18 -N1 /usr/bin/bearing 2>/dev/null | tr -d ' ')
version=$(bearing --version 2>&1)
check native-binary "/usr/bin/bearing is aarch64 (e_machine 0x$machine) and runs here: $version" \
  test "$machine" = b7 -a -n "$version"
check started-by-apt "bearing.socket active after apt install" test "$(systemctl is-active bearing.socket)" = active

echo "ARM64-PHASE-I2C"
. $share/i2c-round.sh

echo "ARM64-PHASE-PURGE"
DEBIAN_FRONTEND=noninteractive apt purge -y bearing > "$out/apt-purge.log" 2>&1
purge_status=$?
check apt-purge "apt purge bearing: exit $purge_status, $(dpkg-query -W -f '${Status}' bearing 2>&1)" \
  sh -c "test $purge_status -eq 0 && ! dpkg-query -W -f '\${Status}' bearing 2>/dev/null | grep -q installed"
# The suite checks that its own install makes the groups: give it the root as it was.
[ "$had_bearing_group" = yes ] || groupdel bearing 2>/dev/null
[ "$had_i2c_group" = yes ] || groupdel i2c 2>/dev/null
rmmod i2c-stub 2>/dev/null
echo "ARM64-NOTE groups before the suite: bearing=$(getent group bearing > /dev/null && echo yes || echo no) i2c=$(getent group i2c > /dev/null && echo yes || echo no) (before apt: $had_bearing_group/$had_i2c_group)"

echo "ARM64-PHASE-SUITE"
bash $share/suite.sh
suite_status=$?
echo "ARM64-DONE passed=$passed failed=$failed suite_status=$suite_status"
[ $failed -eq 0 ] && [ $suite_status -eq 0 ]
