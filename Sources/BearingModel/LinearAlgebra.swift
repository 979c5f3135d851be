#if canImport(Glibc)
import Glibc
#endif

/// A small dense matrix, row-major, for the calibration fits (at most 10×10). Not a general library:
/// just what the constrained least-squares fits need — products, Cholesky, solves and a symmetric
/// eigendecomposition (cyclic Jacobi, which is accurate for small symmetric matrices and never fails).
public struct DenseMatrix: Equatable {
    public let rows: Int
    public let columns: Int
    public var values: [Double]

    public init(rows: Int, columns: Int, repeating value: Double = 0) {
        self.rows = rows
        self.columns = columns
        values = Array(repeating: value, count: rows * columns)
    }

    public init(_ rowsOfValues: [[Double]]) {
        rows = rowsOfValues.count
        columns = rowsOfValues.first?.count ?? 0
        values = rowsOfValues.flatMap { $0 }
    }

    public static func identity(_ n: Int) -> DenseMatrix {
        var m = DenseMatrix(rows: n, columns: n)
        for i in 0..<n { m[i, i] = 1 }
        return m
    }

    public subscript(r: Int, c: Int) -> Double {
        get { values[r * columns + c] }
        set { values[r * columns + c] = newValue }
    }

    public var transposed: DenseMatrix {
        var t = DenseMatrix(rows: columns, columns: rows)
        for r in 0..<rows { for c in 0..<columns { t[c, r] = self[r, c] } }
        return t
    }

    public static func * (a: DenseMatrix, b: DenseMatrix) -> DenseMatrix {
        precondition(a.columns == b.rows)
        var p = DenseMatrix(rows: a.rows, columns: b.columns)
        for i in 0..<a.rows {
            for k in 0..<a.columns {
                let aik = a[i, k]
                if aik == 0 { continue }
                for j in 0..<b.columns { p[i, j] += aik * b[k, j] }
            }
        }
        return p
    }

    public static func - (a: DenseMatrix, b: DenseMatrix) -> DenseMatrix {
        var d = a
        for i in d.values.indices { d.values[i] -= b.values[i] }
        return d
    }

    public func block(rows r: Range<Int>, columns c: Range<Int>) -> DenseMatrix {
        var b = DenseMatrix(rows: r.count, columns: c.count)
        for i in r { for j in c { b[i - r.lowerBound, j - c.lowerBound] = self[i, j] } }
        return b
    }

    /// Lower-triangular L with L·Lᵀ = self, or nil when the matrix is not positive definite.
    public func cholesky() -> DenseMatrix? {
        precondition(rows == columns)
        var l = DenseMatrix(rows: rows, columns: rows)
        for j in 0..<rows {
            var d = self[j, j]
            for k in 0..<j { d -= l[j, k] * l[j, k] }
            guard d > 0, d.isFinite else { return nil }
            let ljj = d.squareRoot()
            l[j, j] = ljj
            for i in (j + 1)..<max(j + 1, rows) {
                var s = self[i, j]
                for k in 0..<j { s -= l[i, k] * l[j, k] }
                l[i, j] = s / ljj
            }
        }
        return l
    }

    /// Solves self·X = B by Gaussian elimination with partial pivoting; nil when singular.
    public func solve(_ b: DenseMatrix) -> DenseMatrix? {
        precondition(rows == columns && b.rows == rows)
        var a = self, x = b
        let n = rows
        var scale = 0.0
        for v in a.values { scale = max(scale, abs(v)) }
        guard scale > 0 else { return nil }
        for col in 0..<n {
            var pivot = col
            for r in (col + 1)..<max(col + 1, n) where abs(a[r, col]) > abs(a[pivot, col]) { pivot = r }
            guard abs(a[pivot, col]) > scale * 1e-14 else { return nil }
            if pivot != col {
                for c in 0..<n { let t = a[col, c]; a[col, c] = a[pivot, c]; a[pivot, c] = t }
                for c in 0..<x.columns { let t = x[col, c]; x[col, c] = x[pivot, c]; x[pivot, c] = t }
            }
            for r in 0..<n where r != col {
                let f = a[r, col] / a[col, col]
                if f == 0 { continue }
                for c in col..<n { a[r, c] -= f * a[col, c] }
                for c in 0..<x.columns { x[r, c] -= f * x[col, c] }
            }
        }
        for r in 0..<n {
            let d = a[r, r]
            for c in 0..<x.columns { x[r, c] /= d }
        }
        return x.values.allSatisfy(\.isFinite) ? x : nil
    }

    /// Eigenvalues (ascending) and eigenvectors (the columns of the returned matrix) of a symmetric matrix.
    public func symmetricEigen() -> (values: [Double], vectors: DenseMatrix) {
        precondition(rows == columns)
        let n = rows
        var a = self
        var v = DenseMatrix.identity(n)
        for _ in 0..<100 {
            var off = 0.0, total = 0.0
            for i in 0..<n {
                for j in 0..<n {
                    total += a[i, j] * a[i, j]
                    if i != j { off += a[i, j] * a[i, j] }
                }
            }
            if off <= total * 1e-30 || off == 0 { break }
            for p in 0..<(n - 1) {
                for q in (p + 1)..<n {
                    let apq = a[p, q]
                    if apq == 0 { continue }
                    let theta = (a[q, q] - a[p, p]) / (2 * apq)
                    let t = (theta >= 0 ? 1.0 : -1.0) / (abs(theta) + (theta * theta + 1).squareRoot())
                    let c = 1 / (t * t + 1).squareRoot(), s = t * c
                    for k in 0..<n {
                        let akp = a[k, p], akq = a[k, q]
                        a[k, p] = c * akp - s * akq
                        a[k, q] = s * akp + c * akq
                    }
                    for k in 0..<n {
                        let apk = a[p, k], aqk = a[q, k]
                        a[p, k] = c * apk - s * aqk
                        a[q, k] = s * apk + c * aqk
                    }
                    for k in 0..<n {
                        let vkp = v[k, p], vkq = v[k, q]
                        v[k, p] = c * vkp - s * vkq
                        v[k, q] = s * vkp + c * vkq
                    }
                }
            }
        }
        let order = (0..<n).sorted { a[$0, $0] < a[$1, $1] }
        var sorted = DenseMatrix(rows: n, columns: n)
        for (newColumn, old) in order.enumerated() { for r in 0..<n { sorted[r, newColumn] = v[r, old] } }
        return (order.map { a[$0, $0] }, sorted)
    }

    public func column(_ c: Int) -> [Double] { (0..<rows).map { self[$0, c] } }
}

extension Matrix3 {
    public init(_ m: DenseMatrix) {
        precondition(m.rows == 3 && m.columns == 3)
        self.init([m[0, 0], m[0, 1], m[0, 2]], [m[1, 0], m[1, 1], m[1, 2]], [m[2, 0], m[2, 1], m[2, 2]])
    }

    public var dense: DenseMatrix {
        DenseMatrix(rows.map { [$0.x, $0.y, $0.z] })
    }

    @inlinable public static func + (a: Matrix3, b: Matrix3) -> Matrix3 {
        Matrix3(rows: [a.rows[0] + b.rows[0], a.rows[1] + b.rows[1], a.rows[2] + b.rows[2]])
    }

    @inlinable public static func * (m: Matrix3, s: Double) -> Matrix3 {
        Matrix3(rows: m.rows.map { $0 * s })
    }

    /// The inverse, or nil when singular.
    public var inverse: Matrix3? {
        guard let inv = dense.solve(.identity(3)) else { return nil }
        return Matrix3(inv)
    }

    /// Eigenvalues (ascending) and unit eigenvectors of a symmetric matrix.
    public var symmetricEigen: (values: [Double], vectors: [Vector3]) {
        let (values, vectors) = dense.symmetricEigen()
        return (values, (0..<3).map { c in Vector3(vectors[0, c], vectors[1, c], vectors[2, c]) })
    }

    /// The symmetric matrix with the same eigenvectors and each eigenvalue λ replaced by f(λ).
    public func symmetricFunction(_ f: (Double) -> Double) -> Matrix3 {
        let (values, vectors) = symmetricEigen
        var m = Matrix3([0, 0, 0], [0, 0, 0], [0, 0, 0])
        for (lambda, e) in zip(values, vectors) {
            let fl = f(lambda)
            m = m + Matrix3(rows: [e * (e.x * fl), e * (e.y * fl), e * (e.z * fl)])
        }
        return m
    }

    /// The largest absolute difference of any element.
    public func maxDifference(_ other: Matrix3) -> Double {
        var d = 0.0
        for (a, b) in zip(rows, other.rows) { d = max(d, abs(a.x - b.x), abs(a.y - b.y), abs(a.z - b.z)) }
        return d
    }
}

extension Vector3 {
    @inlinable public static prefix func - (v: Vector3) -> Vector3 { Vector3(-v.x, -v.y, -v.z) }

    @inlinable public func cross(_ b: Vector3) -> Vector3 {
        Vector3(y * b.z - z * b.y, z * b.x - x * b.z, x * b.y - y * b.x)
    }

    public var normalized: Vector3 {
        let l = length
        return l > 0 ? self / l : self
    }

    /// The mean of `points`; zero for none.
    public static func mean(_ points: [Vector3]) -> Vector3 {
        var sum = Vector3.zero
        for p in points { sum = sum + p }
        return sum / Double(max(1, points.count))
    }

    /// Two unit vectors perpendicular to this unit vector and to each other, with e1 × e2 = self.
    public var perpendicularBasis: (e1: Vector3, e2: Vector3) {
        let seed = abs(x) < 0.9 ? Vector3(1, 0, 0) : Vector3(0, 1, 0)
        let e1 = seed.cross(self).normalized
        return (e1, cross(e1))
    }
}
