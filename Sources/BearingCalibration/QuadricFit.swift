import BearingModel
#if canImport(Glibc)
import Glibc
#endif

/// Direct constrained least-squares fits of an ellipsoid (Li & Griffiths 2004, "Least squares ellipsoid
/// specific fitting", the method of the Magneto tool) and of an ellipse (Fitzgibbon, Pilu & Fisher 1999,
/// the same idea in 2-D).
///
/// The quadric `aX² + bY² + cZ² + 2fYZ + 2gXZ + 2hXY + 2pX + 2qY + 2rZ + d = 0` is fitted to minimise the
/// algebraic distance subject to `kJ − I² = 1` (I = a+b+c, J = ab+bc+ca−f²−g²−h², k = 4), which forces an
/// ellipsoid. With k = 4 every ellipsoid whose shortest axis is at least half its longest is reachable;
/// real soft iron is milder than that (the worst recording here, a QMC5883L, has axes 1 : 1.5 : 2.2 and
/// still satisfies 4J − I² > 0). For a more elongated one the k = 4 fit is a biased start, which the
/// radial refinement in `MagnetometerCalibrator` then carries to the true ellipsoid (tested at 1 : 2.2 : 2.2).
///
/// The data are centred and scaled to unit RMS radius before fitting, so raw counts in the thousands
/// and µT condition the same way.
enum QuadricFit {
    /// An ellipsoid `(x − center)ᵀ · shape · (x − center) = 1`, `shape` symmetric positive definite.
    struct Ellipsoid {
        var center: Vector3
        var shape: Matrix3
    }

    /// An ellipse `(u − center)ᵀ · shape · (u − center) = 1` in a plane's (u, v) coordinates.
    struct Ellipse {
        var center: (Double, Double)
        /// Row-major symmetric 2×2: [[s00, s01], [s01, s11]].
        var s00: Double, s01: Double, s11: Double
    }

    /// Which quadratic terms are free.
    enum Terms {
        /// All six: offset and a full symmetric matrix (9 parameters after normalisation).
        case full
        /// Squares only: offset and one scale per axis (6).
        case axes
        /// One common square term: offset and a radius (4).
        case sphere
    }

    static func ellipsoid(_ points: [Vector3], terms: Terms, k: Double = 4) -> Ellipsoid? {
        guard points.count >= 4 else { return nil }
        let mean = Vector3.mean(points)
        var ss = 0.0
        for p in points { let d = p - mean; ss += d.dot(d) }
        let scale = (ss / Double(points.count)).squareRoot()
        guard scale > 0, scale.isFinite else { return nil }

        // Quadratic-term basis B (6 × nq): reduced parameters → (a, b, c, f, g, h).
        var b: DenseMatrix
        switch terms {
        case .full: b = .identity(6)
        case .axes:
            b = DenseMatrix(rows: 6, columns: 3)
            for i in 0..<3 { b[i, i] = 1 }
        case .sphere: b = DenseMatrix([[1], [1], [1], [0], [0], [0]])
        }
        let nq = b.columns
        var c6 = DenseMatrix(rows: 6, columns: 6)
        for i in 0..<3 {
            for j in 0..<3 { c6[i, j] = i == j ? -1 : k / 2 - 1 }
            c6[i + 3, i + 3] = -k
        }
        let constraint = b.transposed * c6 * b

        let n = nq + 4
        var s = [Double](repeating: 0, count: n * n)
        // A literal size lets the compiler unroll the products.
        switch terms {
        case .full: addMoments(points, mean: mean, scale: scale, terms: .full, quadratic: 6, to: &s)
        case .axes: addMoments(points, mean: mean, scale: scale, terms: .axes, quadratic: 3, to: &s)
        case .sphere: addMoments(points, mean: mean, scale: scale, terms: .sphere, quadratic: 1, to: &s)
        }
        var sm = DenseMatrix(rows: n, columns: n)
        for i in 0..<n { for j in i..<n { sm[i, j] = s[i * n + j]; sm[j, i] = s[i * n + j] } }
        guard let (quad, linear) = solveConstrained(sm, quadratic: nq, constraint: constraint) else { return nil }

        let q6 = (b * DenseMatrix(quad.map { [$0] })).column(0)
        let m = Matrix3([q6[0], q6[5], q6[4]], [q6[5], q6[1], q6[3]], [q6[4], q6[3], q6[2]])
        let lin = Vector3(linear[0], linear[1], linear[2])
        guard let mInv = m.inverse else { return nil }
        let center = -(mInv * lin)
        let k0 = center.dot(m * center) - linear[3]
        guard k0 != 0, k0.isFinite else { return nil }
        let shape = m * (1 / k0)
        guard shape.symmetricEigen.values.allSatisfy({ $0 > 0 }) else { return nil }
        return Ellipsoid(center: mean + center * scale, shape: shape * (1 / (scale * scale)))
    }

    /// Adds f·fᵀ of each point's terms f = (quadratic terms, 2x, 2y, 2z, 1) of the centred, scaled point
    /// to the upper triangle of the row-major (nq + 4)² matrix `s`.
    @inline(__always)
    private static func addMoments(_ points: [Vector3], mean: Vector3, scale: Double, terms: Terms, quadratic nq: Int, to s: inout [Double]) {
        let n = nq + 4
        s.withUnsafeMutableBufferPointer { s in
            withUnsafeTemporaryAllocation(of: Double.self, capacity: n) { f in
                f.initialize(repeating: 0)
                for p in points {
                    let x = (p.x - mean.x) / scale, y = (p.y - mean.y) / scale, z = (p.z - mean.z) / scale
                    switch terms {
                    case .full:
                        f[0] = x * x; f[1] = y * y; f[2] = z * z; f[3] = 2 * y * z; f[4] = 2 * x * z; f[5] = 2 * x * y
                    case .axes:
                        f[0] = x * x; f[1] = y * y; f[2] = z * z
                    case .sphere:
                        f[0] = x * x + y * y + z * z
                    }
                    f[nq] = 2 * x; f[nq + 1] = 2 * y; f[nq + 2] = 2 * z; f[nq + 3] = 1
                    for i in 0..<n {
                        let fi = f[i]
                        for j in i..<n { s[i &* n &+ j] += fi * f[j] }
                    }
                }
            }
        }
    }

    /// Fits an ellipse to 2-D points (Fitzgibbon's constraint 4ac − b² = 1 in conic terms).
    static func ellipse(_ points: [(Double, Double)]) -> Ellipse? {
        guard points.count >= 5 else { return nil }
        var mu = 0.0, mv = 0.0
        for (u, v) in points { mu += u; mv += v }
        mu /= Double(points.count); mv /= Double(points.count)
        var ss = 0.0
        for (u, v) in points { ss += (u - mu) * (u - mu) + (v - mv) * (v - mv) }
        let scale = (ss / Double(points.count)).squareRoot()
        guard scale > 0, scale.isFinite else { return nil }
        // Terms (a, c, h) for a·u² + c·v² + 2h·uv; the ellipse condition ac − h² > 0 as a quadratic form.
        let constraint = DenseMatrix([[0, 2, 0], [2, 0, 0], [0, 0, -4]])
        let n = 6
        var sm = DenseMatrix(rows: n, columns: n)
        for (u0, v0) in points {
            let u = (u0 - mu) / scale, v = (v0 - mv) / scale
            let f = [u * u, v * v, 2 * u * v, 2 * u, 2 * v, 1]
            for i in 0..<n { for j in i..<n { sm[i, j] += f[i] * f[j] } }
        }
        for i in 0..<n { for j in 0..<i { sm[i, j] = sm[j, i] } }
        guard let (quad, linear) = solveConstrained(sm, quadratic: 3, constraint: constraint) else { return nil }
        let (a, c, h) = (quad[0], quad[1], quad[2])
        let det = a * c - h * h
        guard det != 0 else { return nil }
        // center = −M⁻¹·(p, q) with M = [[a, h], [h, c]]
        let cu = -(c * linear[0] - h * linear[1]) / det
        let cv = -(-h * linear[0] + a * linear[1]) / det
        let k0 = a * cu * cu + 2 * h * cu * cv + c * cv * cv - linear[2]
        guard k0 != 0, k0.isFinite else { return nil }
        let (s00, s01, s11) = (a / k0, h / k0, c / k0)
        guard s00 > 0, s00 * s11 - s01 * s01 > 0 else { return nil }
        let sc2 = scale * scale
        return Ellipse(center: (mu + cu * scale, mv + cv * scale), s00: s00 / sc2, s01: s01 / sc2, s11: s11 / sc2)
    }

    /// Minimises vᵀSv subject to v₁ᵀCv₁ = 1, where v = (v₁ quadratic terms, v₂ linear terms and constant):
    /// v₂ = −S₂₂⁻¹S₂₁v₁ and v₁ solves the pencil (S₁₁ − S₁₂S₂₂⁻¹S₂₁)v₁ = λCv₁ for its one positive λ.
    /// The pencil is made symmetric-definite through the Cholesky factor of its left side (with a tiny
    /// ridge, since noise-free data make it exactly singular).
    private static func solveConstrained(_ s: DenseMatrix, quadratic nq: Int, constraint: DenseMatrix) -> ([Double], [Double])? {
        let n = s.rows
        let s11 = s.block(rows: 0..<nq, columns: 0..<nq)
        let s12 = s.block(rows: 0..<nq, columns: nq..<n)
        let s22 = s.block(rows: nq..<n, columns: nq..<n)
        guard let t = s22.solve(s12.transposed) else { return nil }   // S₂₂⁻¹S₂₁
        var reduced = s11 - s12 * t
        var trace = 0.0
        for i in 0..<nq { trace += reduced[i, i] }
        guard trace > 0, trace.isFinite else { return nil }
        for i in 0..<nq {
            for j in 0..<i { let avg = (reduced[i, j] + reduced[j, i]) / 2; reduced[i, j] = avg; reduced[j, i] = avg }
            reduced[i, i] += trace * 1e-13
        }
        guard let l = reduced.cholesky(), let lInv = l.solve(.identity(nq)) else { return nil }
        var kMatrix = lInv * constraint * lInv.transposed
        for i in 0..<nq { for j in 0..<i { let avg = (kMatrix[i, j] + kMatrix[j, i]) / 2; kMatrix[i, j] = avg; kMatrix[j, i] = avg } }
        let (values, vectors) = kMatrix.symmetricEigen()
        guard let top = values.last, top > 0 else { return nil }
        let w = DenseMatrix(vectors.column(nq - 1).map { [$0] })
        let v1 = lInv.transposed * w
        let v2 = (t * v1).column(0).map { -$0 }
        let quad = v1.column(0)
        guard quad.allSatisfy(\.isFinite), v2.allSatisfy(\.isFinite) else { return nil }
        return (quad, v2)
    }
}
