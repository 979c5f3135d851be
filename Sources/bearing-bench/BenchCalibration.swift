import ArgumentParser
import BearingCalibration
import BearingModel
import BearingPOSIX
import FoundationEssentials
#if canImport(Glibc)
import Glibc
#endif

/// The calibration fit's cost, for `bench/calibration-fit`: N samples of a known distortion over the
/// sphere with 1% noise, fitted `runs` times (algebraic fit, refinement, cluster thinning, outlier
/// rounds and the half-sample fits behind the heading-error figure). Prints the median time.
struct BenchCalibration: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "bench-calibration")

    @Option var samples: Int = 10_000
    @Option var runs: Int = 5

    func run() throws {
        var state: UInt64 = 42
        func uniform() -> Double {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Double(state >> 11) / Double(1 << 53)
        }
        let soft = Matrix3([1.1, 0.05, -0.02], [0.05, 0.92, 0.03], [-0.02, 0.03, 1.04])
        let offset = Vector3(21, -9.5, 6)
        let golden = Double.pi * (3 - 5.0.squareRoot())
        let raw = (0..<samples).map { i -> Vector3 in
            let z = 1 - 2 * (Double(i) + 0.5) / Double(samples)
            let r = (1 - z * z).squareRoot()
            let u = Vector3(r * cos(golden * Double(i)), r * sin(golden * Double(i)), z)
            let noise = Vector3(uniform() - 0.5, uniform() - 0.5, uniform() - 0.5) * (0.5 * 3.46)   // ±1% of 50 µT, σ = 0.5
            return soft * (u * 50) + offset + noise
        }
        let calibrator = MagnetometerCalibrator(options: .init(field: 50))
        var times: [Double] = []
        var last: CalibrationFit?
        for _ in 0..<max(1, runs) {
            let start = Syscall.monotonicSeconds()
            last = try? calibrator.fit(raw)
            times.append(Syscall.monotonicSeconds() - start)
        }
        guard let fit = last else { throw ExitCode(1) }
        times.sort()
        print(String(printf: "%d samples: fit in %.1f ms (median of %d; fastest %.1f ms), model %@, offset error %.3f µT, fit error %.2f%%",
                     samples, times[times.count / 2] * 1000, times.count, times[0] * 1000, fit.model.rawValue,
                     (fit.calibration.offset - offset).length, fit.figures.fitError))
    }
}
