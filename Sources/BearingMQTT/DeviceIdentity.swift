import BearingModel
/// Who this device is on a broker: a stable id made from `/etc/machine-id` without giving it away.
///
/// It is systemd's application-specific machine id (`sd_id128_get_machine_app_specific`, what
/// `systemd-id128 machine-id --app-specific=APP` prints): HMAC-SHA256 keyed by the machine id over
/// Bearing's application id, cut to 128 bits and marked as a v4 UUID. machine-id(5) asks applications to
/// use this instead of the raw id, which must stay confidential. `device` is its first 12 hex digits (48
/// bits: 50,000 devices collide with odds of about 4 in a billion).
public struct DeviceIdentity: Equatable, Sendable {
    /// Bearing's application id (made once with `systemd-id128 new`).
    public static let applicationID = "94ff05fbd3c14f99b7c5d391fb4c475e"

    /// The application-specific id, 32 lowercase hex digits.
    public let appSpecificID: String

    /// From the 32 hex digits of a machine id; nil when it is not one.
    public init?(machineID: String) {
        guard let key = Self.bytes(hex: String(machineID.split(separator: "\n").first?.trimmingWhitespace() ?? "")), key.count == 16,
              let app = Self.bytes(hex: Self.applicationID) else { return nil }
        var id = Array(SHA256.hmac(key: key, message: app).prefix(16))
        id[6] = (id[6] & 0x0F) | 0x40 // version 4
        id[8] = (id[8] & 0x3F) | 0x80 // variant 1 (RFC 4122)
        appSpecificID = id.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    }

    /// The device name in topics (`bearing/<device>`).
    public var device: String { String(appSpecificID.prefix(12)) }
    /// The MQTT client id.
    public var clientID: String { "bearing-\(device)" }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        for i in stride(from: 0, to: digits.count, by: 2) {
            guard let b = UInt8(String(decoding: digits[i...i + 1], as: UTF8.self), radix: 16) else { return nil }
            out.append(b)
        }
        return out
    }
}

/// SHA-256 (FIPS 180-4) and HMAC-SHA256 (RFC 2104), for ids, not for secrets at speed.
public enum SHA256 {
    private static let k: [UInt32] = [
        0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
    ]

    public static func hash(_ message: [UInt8]) -> [UInt8] {
        var h: [UInt32] = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]
        var data = message
        data.append(0x80)
        while data.count % 64 != 56 { data.append(0) }
        let bits = UInt64(message.count) * 8
        for i in (0..<8).reversed() { data.append(UInt8(truncatingIfNeeded: bits >> (UInt64(i) * 8))) }
        var w = [UInt32](repeating: 0, count: 64)
        for chunk in stride(from: 0, to: data.count, by: 64) {
            for i in 0..<16 {
                w[i] = (0..<4).reduce(0) { $0 << 8 | UInt32(data[chunk + i * 4 + $1]) }
            }
            for i in 16..<64 {
                let s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3)
                let s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10)
                w[i] = w[i - 16] &+ s0 &+ w[i - 7] &+ s1
            }
            var (a, b, c, d, e, f, g, hh) = (h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7])
            for i in 0..<64 {
                let t1 = hh &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ ((e & f) ^ (~e & g)) &+ k[i] &+ w[i]
                let t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) ^ (a & c) ^ (b & c))
                (hh, g, f, e, d, c, b, a) = (g, f, e, d &+ t1, c, b, a, t1 &+ t2)
            }
            for (i, v) in [a, b, c, d, e, f, g, hh].enumerated() { h[i] = h[i] &+ v }
        }
        return h.flatMap { v in (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - UInt32($0) * 8)) } }
    }

    public static func hmac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        var k = key.count > 64 ? hash(key) : key
        k += [UInt8](repeating: 0, count: 64 - k.count)
        return hash(k.map { $0 ^ 0x5c } + hash(k.map { $0 ^ 0x36 } + message))
    }

    private static func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { x >> n | x << (32 - n) }
}
