#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Hamilton quaternion w + xi + yj + zk. As an orientation it rotates vectors of one frame into another:
/// `v_to = q ⊗ v_from ⊗ q*` (`rotate`), and `a * b` applies `b` first, then `a`.
public struct Quaternion: Equatable, Hashable, Sendable, Codable, CustomStringConvertible {
    public var w: Double
    public var x: Double
    public var y: Double
    public var z: Double

    @inlinable public init(w: Double, x: Double, y: Double, z: Double) {
        self.w = w
        self.x = x
        self.y = y
        self.z = z
    }

    public static let identity = Quaternion(w: 1, x: 0, y: 0, z: 0)

    /// The rotation by `angle` radians about `axis` (right-handed; the axis need not be unit length).
    @inlinable public init(axis: Vector3, angle: Double) {
        let n = axis.length
        guard n > 0, n.isFinite else { self = .identity; return }
        let s = sin(angle / 2) / n
        self.init(w: cos(angle / 2), x: axis.x * s, y: axis.y * s, z: axis.z * s)
    }

    /// The rotation by |v| radians about v: what a constant angular rate ω turns through in dt is
    /// `Quaternion(rotationVector: ω * dt)`.
    @inlinable public init(rotationVector v: Vector3) {
        let angle = v.length
        guard angle > 1e-300 else { self = .identity; return }
        let s = sin(angle / 2) / angle
        self.init(w: cos(angle / 2), x: v.x * s, y: v.y * s, z: v.z * s)
    }

    /// The rotation by `angle` radians about +z (counter-clockwise seen from above when z is up).
    @inlinable public static func aboutZ(_ angle: Double) -> Quaternion {
        Quaternion(w: cos(angle / 2), x: 0, y: 0, z: sin(angle / 2))
    }

    /// The Hamilton product: the rotation `b` followed by `a`.
    @inlinable public static func * (a: Quaternion, b: Quaternion) -> Quaternion {
        Quaternion(w: a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z,
                   x: a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                   y: a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                   z: a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w)
    }

    @inlinable public var conjugate: Quaternion { Quaternion(w: w, x: -x, y: -y, z: -z) }
    @inlinable public var norm: Double { (w * w + x * x + y * y + z * z).squareRoot() }
    @inlinable public var isFinite: Bool { w.isFinite && x.isFinite && y.isFinite && z.isFinite }

    /// Scaled to unit norm (unchanged when the norm is zero or not finite).
    @inlinable public var normalized: Quaternion {
        let n = norm
        guard n > 0, n.isFinite else { return self }
        return Quaternion(w: w / n, x: x / n, y: y / n, z: z / n)
    }

    /// `q ⊗ (0, v) ⊗ q*` for a unit quaternion, without forming the products.
    /// The z component of `rotate(v)` alone: the third row of the rotation matrix.
    @inlinable public func rotatedZ(_ v: Vector3) -> Double {
        2 * (x * z - w * y) * v.x + 2 * (y * z + w * x) * v.y + (1 - 2 * (x * x + y * y)) * v.z
    }

    @inlinable public func rotate(_ v: Vector3) -> Vector3 {
        // v + 2w(u × v) + 2u × (u × v), u = (x, y, z).
        let tx = 2 * (y * v.z - z * v.y)
        let ty = 2 * (z * v.x - x * v.z)
        let tz = 2 * (x * v.y - y * v.x)
        return Vector3(v.x + w * tx + (y * tz - z * ty),
                       v.y + w * ty + (z * tx - x * tz),
                       v.z + w * tz + (x * ty - y * tx))
    }

    /// The rotation angle in radians, 0…π (q and −q are the same rotation).
    @inlinable public var angle: Double { 2 * acos(min(1, abs(w) / max(norm, .leastNonzeroMagnitude))) }

    /// The rotation vector (axis × angle, radians, angle ≤ π) of a unit quaternion: the inverse of
    /// `init(rotationVector:)`.
    @inlinable public var rotationVector: Vector3 {
        let q = w < 0 ? Quaternion(w: -w, x: -x, y: -y, z: -z) : self
        let s = (q.x * q.x + q.y * q.y + q.z * q.z).squareRoot()
        guard s > 1e-300 else { return Vector3(2 * q.x, 2 * q.y, 2 * q.z) }
        let angle = 2 * atan2(s, q.w)
        return Vector3(q.x, q.y, q.z) * (angle / s)
    }

    /// The rotation matrix of a unit quaternion: `matrix * v == rotate(v)`.
    @inlinable public var matrix: Matrix3 {
        Matrix3([1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)])
    }

    public var description: String { "(\(w), \(x), \(y), \(z))" }
}
