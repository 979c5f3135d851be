# The kernel-I2C round of scripts/vm-arm64/guest.sh (sourced: uses its check()): the arm64 `bearing probe --read`
# against i2c-dev + i2c-stub on arm64, one magnetometer and one accelerometer/gyroscope. The registers and the
# values they must give are those of scripts/vm-i2c/guest.sh (rounds 1 and 4) and KernelI2CTests:
#   HMC5883L 0x1e: ID "H43", RDY, X=+545 Z=-1090 Y=+218 counts at 1090 LSB/G -> 50, 20, -100 µT;
#   MPU-6050 0x68: WHO_AM_I 0x68, DATA_RDY, accel 4096 -2048 8192 at 8192 LSB/g, temperature raw 0 (36.53 °C),
#   gyro 655 -131 0 at 65.5 LSB per °/s.
# The bus number is looked up (under systemd and udev it need not be 0).
modprobe i2c-dev && modprobe i2c-stub chip_addr=0x1e,0x68
stub_status=$?
check i2c-stub-loaded "modprobe i2c-dev, i2c-stub (built for $(uname -r)): exit $stub_status" test $stub_status -eq 0
bus=$(i2cdetect -l | awk '/SMBus stub driver/ {sub("i2c-", "", $1); print $1; exit}')
b() { i2cset -y "$bus" "$1" "$2" "$3" b || echo "ARM64-NOTE i2cset $bus $1 $2 $3 failed"; }
b 0x1e 0x0a 0x48; b 0x1e 0x0b 0x34; b 0x1e 0x0c 0x33; b 0x1e 0x09 0x01
b 0x1e 0x03 0x02; b 0x1e 0x04 0x21; b 0x1e 0x05 0xfb; b 0x1e 0x06 0xbe; b 0x1e 0x07 0x00; b 0x1e 0x08 0xda
b 0x68 0x75 0x68; b 0x68 0x3a 0x01
b 0x68 0x3b 0x10; b 0x68 0x3c 0x00; b 0x68 0x3d 0xf8; b 0x68 0x3e 0x00; b 0x68 0x3f 0x20; b 0x68 0x40 0x00
b 0x68 0x41 0x00; b 0x68 0x42 0x00
b 0x68 0x43 0x02; b 0x68 0x44 0x8f; b 0x68 0x45 0xff; b 0x68 0x46 0x7d; b 0x68 0x47 0x00; b 0x68 0x48 0x00
udevadm settle
check i2c-device-node "/dev/i2c-$bus: $(stat -c '%U:%G %a' /dev/i2c-$bus 2>&1) (Debian's udev rule: root:i2c 660)" \
  test "$(stat -c '%U:%G %a' /dev/i2c-$bus 2>/dev/null)" = "root:i2c 660"
bearing probe --bus /dev/i2c-$bus --read > "$out/probe.txt" 2>&1
probe_status=$?
sed 's/^/ARM64-PROBE /' "$out/probe.txt"
check i2c-probe-exit "bearing probe --bus /dev/i2c-$bus --read: exit $probe_status" test $probe_status -eq 0
check i2c-identified "0x1e Honeywell HMC5883L and 0x68 InvenSense MPU-6050 in the identification table" \
  sh -c "grep -q '^0x1e     Honeywell HMC5883L' $out/probe.txt && grep -q '^0x68     InvenSense MPU-6050' $out/probe.txt"
python3 - "$out/probe.txt" > "$out/probe-values.txt" <<'EOF'
import math, sys
text = open(sys.argv[1]).read().splitlines()
g, rad = 9.80665, math.pi / 180
def line(prefix):
    return next((l for l in text if l.startswith(prefix)), "")
def vector(words, after):
    # "<after> x V y V z V" (KernelI2CTests' parsing)
    if after not in words: return None
    i = words.index(after)
    try: return [float(words[i + 2]), float(words[i + 4]), float(words[i + 6])]
    except (IndexError, ValueError): return None
def close(got, want, tol):
    return got is not None and all(abs(a - b) <= tol for a, b in zip(got, want))
ok = True
mag_line = line("read hmc5883l 0x1e: x ")
w = ["mag"] + mag_line.split(":", 1)[-1].split()  # "mag x 50.000 y 20.000 z -100.000 µT ..."
mag = vector(w, "mag")
good = close(mag, [50, 20, -100], 0.002)
print(f"hmc5883l 0x1e mag µT {mag} want [50, 20, -100] {'OK' if good else 'WRONG'}"); ok &= good
imu_line = line("read mpu6xxx 0x68: accel x ")
w = imu_line.split()
accel, gyro = vector(w, "accel"), vector(w, "gyro")
want_a = [v / 8192 * g for v in (4096, -2048, 8192)]
want_g = [v / 65.5 * rad for v in (655, -131, 0)]
good = close(accel, want_a, 0.002)
print(f"mpu6xxx 0x68 accel m/s² {accel} want {[round(v, 4) for v in want_a]} {'OK' if good else 'WRONG'}"); ok &= good
good = close(gyro, want_g, 0.0002)
print(f"mpu6xxx 0x68 gyro rad/s {gyro} want {[round(v, 5) for v in want_g]} {'OK' if good else 'WRONG'}"); ok &= good
good = "temperature 36.5 °C" in imu_line
print(f"mpu6xxx 0x68 temperature 36.5 °C {'OK' if good else 'WRONG'}"); ok &= good
print("OK" if ok else "NOT-OK")
EOF
sed 's/^/ARM64-NOTE i2c: /' "$out/probe-values.txt"
check i2c-values "HMC5883L 50/20/-100 µT; MPU-6050 accel 4.903/-2.452/9.807 m/s², gyro 0.17453/-0.03491/0 rad/s, 36.5 °C" \
  grep -qx OK "$out/probe-values.txt"
