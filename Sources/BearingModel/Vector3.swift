#if canImport(Glibc)
import Glibc
#endif

/// A 3-vector (a magnetic field in µT, an axis, …).
public struct Vector3: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var x: Double
    public var y: Double
    public var z: Double

    @inlinable public init(_ x: Double, _ y: Double, _ z: Double) {
        self.x = x
        self.y = y
        self.z = z
    }

    public static let zero = Vector3(0, 0, 0)

    @inlinable public var length: Double { (x * x + y * y + z * z).squareRoot() }
    @inlinable public var isFinite: Bool { x.isFinite && y.isFinite && z.isFinite }

    @inlinable public static func + (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x + b.x, a.y + b.y, a.z + b.z) }
    @inlinable public static func - (a: Vector3, b: Vector3) -> Vector3 { Vector3(a.x - b.x, a.y - b.y, a.z - b.z) }
    @inlinable public static func * (a: Vector3, s: Double) -> Vector3 { Vector3(a.x * s, a.y * s, a.z * s) }
    @inlinable public static func / (a: Vector3, s: Double) -> Vector3 { Vector3(a.x / s, a.y / s, a.z / s) }
    @inlinable public func dot(_ b: Vector3) -> Double { x * b.x + y * b.y + z * b.z }

    public var description: String { "(\(x), \(y), \(z))" }
}

/// A 3×3 matrix, row-major.
public struct Matrix3: Equatable, Hashable, Sendable {
    public var rows: [Vector3]

    @inlinable public init(rows: [Vector3]) {
        precondition(rows.count == 3)
        self.rows = rows
    }

    @inlinable public init(_ r0: [Double], _ r1: [Double], _ r2: [Double]) {
        rows = [Vector3(r0[0], r0[1], r0[2]), Vector3(r1[0], r1[1], r1[2]), Vector3(r2[0], r2[1], r2[2])]
    }

    public static let identity = Matrix3([1, 0, 0], [0, 1, 0], [0, 0, 1])

    @inlinable public static func * (m: Matrix3, v: Vector3) -> Vector3 {
        Vector3(m.rows[0].dot(v), m.rows[1].dot(v), m.rows[2].dot(v))
    }

    @inlinable public var transposed: Matrix3 {
        let r = rows
        return Matrix3([r[0].x, r[1].x, r[2].x], [r[0].y, r[1].y, r[2].y], [r[0].z, r[1].z, r[2].z])
    }

    @inlinable public static func * (a: Matrix3, b: Matrix3) -> Matrix3 {
        let bt = b.transposed
        return Matrix3(rows: a.rows.map { r in Vector3(r.dot(bt.rows[0]), r.dot(bt.rows[1]), r.dot(bt.rows[2])) })
    }

    @inlinable public var determinant: Double {
        let r = rows
        return r[0].x * (r[1].y * r[2].z - r[1].z * r[2].y)
            - r[0].y * (r[1].x * r[2].z - r[1].z * r[2].x)
            + r[0].z * (r[1].x * r[2].y - r[1].y * r[2].x)
    }

    /// Rotation about the board's axes by roll (x), pitch (y), yaw (z), in degrees, applied z·y·x.
    public static func rotation(rollDegrees: Double, pitchDegrees: Double, yawDegrees: Double) -> Matrix3 {
        let (r, p, y) = (rollDegrees * .pi / 180, pitchDegrees * .pi / 180, yawDegrees * .pi / 180)
        let rx = Matrix3([1, 0, 0], [0, cos(r), -sin(r)], [0, sin(r), cos(r)])
        let ry = Matrix3([cos(p), 0, sin(p)], [0, 1, 0], [-sin(p), 0, cos(p)])
        let rz = Matrix3([cos(y), -sin(y), 0], [sin(y), cos(y), 0], [0, 0, 1])
        return rz * ry * rx
    }
}
