// swift-tools-version: 6.0
import PackageDescription

// Layering: each target depends only on targets above it in this list (docs/dev/architecture.md says why
// the cuts are where they are; Tests/RepositoryTests checks the rules).
//   C bridges     CBearingSys (Linux calls Glibc lacks, snprintf), CGPS (libgps), CI2C (libi2c),
//                 CMosquitto (libmosquitto), CYAML (libyaml), CMicroHTTPD (libmicrohttpd)
//   pure core     BearingModel        values, vector and quaternion maths, number formatting
//   (no I/O,      BearingAttitude     the attitude filter, WMM2025, rate of turn
//    no threads)  BearingWire         gpsd's JSON dialect, client requests, the operator-spec vocabulary
//                 BearingCalibration  magnetometer, accelerometer and level fits and their records
//                 BearingOnlineCalibration  calibration where the compass lives: online hard and soft iron,
//                                     steps, the fits judged on samples they did not see, the deviation from driving
//                 BearingCompass      the compass's stages (magnetometer alone, AttitudeFusion, WMM at the fix):
//                                     values fed one input at a time, no OpenCombine
//                 BearingPublishing   the hub: pipelines, the queue, the clock, named and per-client chains
//                 BearingRecording    the black box's records, file format, frame codec and ring
//                 BearingSelfTest     `bearing selftest`'s verdicts: statistics at rest, datasheet figures, the
//                                     guided moves' axis signs, the table and the Markdown report
//   I/O           BearingLog, BearingYAML, BearingPOSIX (syscalls wrapped once), BearingService (the
//                 service group, the Door protocol), BearingI2C (the bus protocol, /dev/i2c-N),
//                 BearingConfig (YAML to typed config: key tables, errors naming the key), BearingGPSD
//                 (the libgps delegate), BearingSensors (chip drivers, readers), BearingSimulator (register
//                 models, NMEA tracks, the simulated buses), BearingClient (the client library: wire and
//                 POSIX only)
//   workflows     BearingCalibrationWorkflow (calibrate, level, swing, attitude: collection, grading, fitting,
//                 saving), BearingTerminal (the CLI's presentation, tested in-process)
//   doors         BearingSocketDoor (the UNIX socket and TCP door, gpsd's JSON; the request router every door
//                 whose readers are hub clients shares), BearingWebDoor (the page and the protocol over HTTP,
//                 libmicrohttpd), BearingMarine (NMEA 0183, Signal K), BearingMQTT (client, door, spool, fleet records)
//   the daemon    BearingDaemon: the agent and its wiring (the hub's sources into the compass's stages; no
//                 OpenCombine: that is the hub's alone), the data log, replay; `Daemon`, one entry point: the agent
//                 and the doors in one service group
//                 BearingDiagnostics: `bearing report`'s collector
//   the CLI       bearing: the ParsableCommands and their presentation; bearing-bench: the benchmarks' workloads
// The estimator's core and the simulator are compiled with -O in debug builds too (the tests' build): their
// tests drive the fusion through hours of simulated 40 Hz drives and real IMU trials, which took up to six times
// as long unoptimised (RoadDriveTests 290 s → 49 s, BROADTrialTests 92 s → 37 s; docs/dev/contributing.md). The
// daemon ships optimised, so this is also the code that runs. -O drops `assert`: these targets use
// `precondition` (LayeringTests.testTheTargetsOptimisedInDebugHaveNoAssert). To step through them in a
// debugger, remove the setting locally.
let optimizedInDebug: [SwiftSetting] = [.unsafeFlags(["-O"], .when(configuration: .debug))]

let package = Package(
    name: "Bearing",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "bearing", targets: ["bearing"]),
        .library(name: "BearingClient", targets: ["BearingClient"]),
    ],
    dependencies: [
        .package(url: "https://github.com/OpenCombine/OpenCombine.git", exact: "0.14.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/pointfreeco/combine-schedulers.git", from: "1.2.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CGPS",
            pkgConfig: "libgps",
            providers: [.apt(["libgps-dev"])]
        ),
        .systemLibrary(
            name: "CI2C",
            providers: [.apt(["libi2c-dev"])]
        ),
        .systemLibrary(
            name: "CMosquitto",
            pkgConfig: "libmosquitto",
            providers: [.apt(["libmosquitto-dev"])]
        ),
        // libmicrohttpd (Debian's libmicrohttpd-dev) for the web door; its variadic start and the peer's address
        // in a small shim.
        .target(name: "CMicroHTTPD", linkerSettings: [.linkedLibrary("microhttpd")]),
        .systemLibrary(
            name: "CYAML",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]
        ),
        // Fortified libc calls in the C shim (Debian's hardening default) are set here, for C only: passed as
        // -Xcc they would reach Swift's importer too, and glibc 2.41's fortified headers declare read, poll,
        // vsnprintf … twice, which Swift finds ambiguous.
        .target(name: "CBearingSys", cSettings: [.define("_FORTIFY_SOURCE", to: "2", .when(configuration: .release))]),
        .target(name: "BearingYAML", dependencies: ["CYAML"]),
        .target(name: "BearingLog"),
        .target(name: "BearingModel", dependencies: ["CBearingSys"], swiftSettings: optimizedInDebug),
        .target(name: "BearingAttitude", dependencies: ["BearingModel"], swiftSettings: optimizedInDebug),
        .target(name: "BearingWire", dependencies: ["BearingModel", "CBearingSys"]),
        .target(name: "BearingCalibration", dependencies: ["BearingModel", "BearingAttitude", "BearingWire"], swiftSettings: optimizedInDebug),
        // Calibration where the compass lives: online hard and soft iron, steps, the deviation from driving.
        .target(name: "BearingOnlineCalibration", dependencies: ["BearingModel", "BearingAttitude", "BearingCalibration"], swiftSettings: optimizedInDebug),
        .target(name: "BearingCompass", dependencies: ["BearingModel", "BearingAttitude", "BearingCalibration", "BearingOnlineCalibration"], swiftSettings: optimizedInDebug),
        .target(name: "BearingPublishing", dependencies: [
            "BearingModel", "BearingWire",
            .product(name: "OpenCombine", package: "OpenCombine"),
            .product(name: "OpenCombineDispatch", package: "OpenCombine"),
        ]),
        .target(name: "BearingRecording", dependencies: ["BearingModel"]),
        .target(name: "BearingSelfTest", dependencies: ["BearingModel"]),
        .target(name: "BearingPOSIX", dependencies: ["CBearingSys", "BearingModel"]),
        .target(name: "BearingService", dependencies: ["BearingLog"]),
        .target(name: "BearingConfig", dependencies: ["BearingYAML", "BearingModel", "BearingWire", "BearingPOSIX", "BearingI2C", "BearingLog"]),
        .target(name: "BearingI2C", dependencies: ["CI2C", "BearingPOSIX", "BearingModel"]),
        .target(name: "BearingGPSD", dependencies: ["CGPS", "BearingPOSIX", "BearingModel", "BearingWire"]),
        .target(name: "BearingSensors", dependencies: ["BearingModel", "BearingI2C", "BearingPOSIX", "BearingRecording"]),
        .target(name: "BearingSimulator", dependencies: ["BearingModel", "BearingWire", "BearingI2C", "BearingPOSIX"], swiftSettings: optimizedInDebug),
        .target(name: "BearingClient", dependencies: ["BearingModel", "BearingWire", "BearingPOSIX"]),
        .target(name: "BearingCalibrationWorkflow", dependencies: [
            "BearingModel", "BearingAttitude", "BearingWire", "BearingCalibration", "BearingOnlineCalibration", "BearingCompass", "BearingPOSIX", "BearingI2C",
            "BearingSensors", "BearingSimulator", "BearingClient", "BearingSelfTest",
        ]),
        .target(name: "BearingTerminal", dependencies: ["BearingModel", "BearingWire", "BearingPOSIX", "BearingCalibration", "BearingCalibrationWorkflow"]),
        // The socket and TCP door (gpsd's JSON dialect): its readers are the hub's clients.
        .target(name: "BearingSocketDoor", dependencies: [
            "BearingModel", "BearingWire", "BearingPublishing", "BearingPOSIX", "BearingService", "BearingConfig", "BearingLog",
        ]),
        .target(name: "BearingMarine", dependencies: [
            "BearingModel", "BearingAttitude", "BearingWire", "BearingPublishing", "BearingPOSIX", "BearingService", "BearingConfig",
            "BearingYAML", "BearingLog",
        ]),
        .target(name: "BearingMQTT", dependencies: [
            "CMosquitto", "BearingModel", "BearingWire", "BearingPublishing", "BearingPOSIX", "BearingService",
            "BearingConfig", "BearingYAML", "BearingLog",
        ]),
        // The web door: the page (built in) and the protocol over HTTP, its pages hub clients like socket readers.
        .target(name: "BearingWebDoor", dependencies: [
            "CMicroHTTPD", "BearingModel", "BearingWire", "BearingPublishing", "BearingPOSIX", "BearingService", "BearingSocketDoor", "BearingLog",
        ], resources: [.embedInCode("page/index.html")]),
        .target(name: "BearingDaemon", dependencies: [
            "BearingModel", "BearingAttitude", "BearingWire", "BearingPublishing", "BearingCompass", "BearingCalibration", "BearingOnlineCalibration", "BearingPOSIX",
            "BearingService", "BearingConfig", "BearingYAML", "BearingLog", "BearingI2C", "BearingGPSD", "BearingSensors",
            "BearingSimulator", "BearingMarine", "BearingMQTT", "BearingSocketDoor", "BearingWebDoor", "BearingRecording",
        ]),
        // `bearing report`'s collector: the daemon's config and files, external commands (Subprocess), tar.
        .target(name: "BearingDiagnostics", dependencies: [
            "BearingModel", "BearingPOSIX", "BearingConfig", "BearingClient", "BearingMQTT", "BearingDaemon",
        ]),
        .executableTarget(
            name: "bearing",
            dependencies: [
                .product(name: "ArgumentParser", package: "swift-argument-parser"), "BearingAttitude", "BearingCalibration", "BearingOnlineCalibration", "BearingCalibrationWorkflow", "BearingClient", "BearingDaemon", "BearingDiagnostics", "BearingI2C", "BearingLog", "BearingMQTT", "BearingModel", "BearingPOSIX", "BearingRecording", "BearingSelfTest", "BearingSensors", "BearingSimulator", "BearingTerminal", "BearingWebDoor", "BearingWire",
            ]
        ),
        // The benchmark workloads (bench/), not shipped in the .deb (scripts/package builds bearing alone).
        .executableTarget(
            name: "bearing-bench",
            dependencies: [
                .product(name: "ArgumentParser", package: "swift-argument-parser"), "BearingAttitude", "BearingCalibration", "BearingOnlineCalibration", "BearingCompass", "BearingDaemon", "BearingI2C", "BearingLog", "BearingModel", "BearingPOSIX", "BearingPublishing", "BearingRecording", "BearingSensors", "BearingSimulator", "BearingSocketDoor", "BearingWire", "CBearingSys",
            ]
        ),
        // libFuzzer targets (scripts/fuzz builds them with -sanitize=fuzzer -DFUZZING); a plain build makes
        // them corpus replayers.
        .target(
            name: "FuzzChecks",
            dependencies: ["BearingModel", "BearingWire", "BearingMQTT"],
            path: "Fuzz/Checks"
        ),
        .target(
            name: "FuzzConfigChecks",
            dependencies: ["FuzzChecks", "BearingDaemon", "BearingConfig"],
            path: "Fuzz/ConfigChecks"
        ),
        .executableTarget(
            name: "fuzz-session",
            dependencies: ["FuzzChecks"],
            path: "Fuzz/Session",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "fuzz-fleet",
            dependencies: ["FuzzChecks"],
            path: "Fuzz/Fleet",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "fuzz-spool",
            dependencies: ["FuzzChecks"],
            path: "Fuzz/Spool",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        .executableTarget(
            name: "fuzz-config",
            dependencies: ["FuzzChecks", "FuzzConfigChecks"],
            path: "Fuzz/Config",
            swiftSettings: [.unsafeFlags(["-parse-as-library"])]
        ),
        // Tests mirror the source targets; TestSupport holds what they share (shared-data locator,
        // gpsfake rig, socket client, the built binary).
        .target(
            name: "TestSupport",
            dependencies: ["BearingAttitude", "BearingCalibration", "BearingCompass", "BearingDaemon", "BearingI2C", "BearingLog", "BearingModel", "BearingPOSIX", "BearingPublishing", "BearingService", "BearingSimulator", "BearingSocketDoor", "BearingWire"],
            path: "Tests/TestSupport"
        ),
        // The whole-daemon rig (gpsfake, mosquitto, the built binary), for the tests that need it alone.
        .target(name: "DaemonTestRig", dependencies: ["BearingAttitude", "BearingDaemon", "BearingI2C", "BearingLog", "BearingMQTT", "BearingModel", "BearingOnlineCalibration", "BearingPOSIX", "BearingSimulator", "TestSupport"], path: "Tests/DaemonTestRig"),
        .testTarget(name: "BearingModelTests", dependencies: ["BearingAttitude", "BearingCalibration", "BearingMQTT", "BearingModel", "BearingWire"]),
        .testTarget(name: "BearingAttitudeTests", dependencies: ["BearingAttitude", "BearingCalibration", "BearingOnlineCalibration", "BearingCalibrationWorkflow", "BearingDaemon", "BearingMQTT", "BearingMarine", "BearingModel", "BearingPublishing", "BearingSimulator", "BearingWire", "TestSupport"]),
        .testTarget(name: "BearingWireTests", dependencies: ["BearingAttitude", "BearingCalibration", "BearingMQTT", "BearingMarine", "BearingModel", "BearingPublishing", "BearingWire", "FuzzChecks", "TestSupport"]),
        .testTarget(name: "BearingCalibrationTests", dependencies: ["BearingAttitude", "BearingCalibration", "BearingOnlineCalibration", "BearingDaemon", "BearingMQTT", "BearingMarine", "BearingModel", "BearingPOSIX", "BearingPublishing", "BearingSensors", "BearingSimulator", "BearingWire"]),
        .testTarget(name: "BearingPublishingTests", dependencies: ["BearingCalibration", "BearingDaemon", "BearingMQTT", "BearingModel", "BearingPOSIX", "BearingPublishing", "BearingSimulator", "BearingWire", .product(name: "CombineSchedulers", package: "combine-schedulers"), .product(name: "OpenCombine", package: "OpenCombine"), .product(name: "OpenCombineDispatch", package: "OpenCombine")]),
        .testTarget(name: "BearingCompassTests", dependencies: ["BearingAttitude", "BearingCalibration", "BearingOnlineCalibration", "BearingCompass", "BearingModel", "BearingPublishing", "BearingSensors", "BearingSimulator", "BearingWire", .product(name: "OpenCombine", package: "OpenCombine")]),
        .testTarget(name: "BearingRecordingTests", dependencies: ["BearingModel", "BearingRecording"]),
        .testTarget(name: "BearingPOSIXTests", dependencies: ["BearingDaemon", "BearingModel", "BearingPOSIX", "BearingWire", "TestSupport"]),
        .testTarget(name: "BearingServiceTests", dependencies: ["BearingLog", "BearingPOSIX", "BearingService", "TestSupport"]),
        .testTarget(name: "BearingGPSDTests", dependencies: ["BearingGPSD", "BearingMQTT", "BearingModel", "BearingWire", "CGPS", "TestSupport"]),
        .testTarget(name: "BearingSensorsTests", dependencies: ["BearingAttitude", "BearingCalibration", "BearingCompass", "BearingDaemon", "BearingI2C", "BearingModel", "BearingPOSIX", "BearingPublishing", "BearingSensors", "BearingSimulator", "BearingWire", .product(name: "CombineSchedulers", package: "combine-schedulers"), .product(name: "OpenCombine", package: "OpenCombine"), "TestSupport"]),
        .testTarget(name: "BearingMarineTests", dependencies: ["BearingAttitude", "BearingCalibration", "BearingDaemon", "BearingMQTT", "BearingMarine", "BearingModel", "BearingPublishing", "BearingWire", "TestSupport"]),
        .testTarget(name: "BearingMQTTTests", dependencies: ["BearingConfig", "BearingDaemon", "BearingMQTT", "BearingMarine", "BearingModel", "BearingPOSIX", "BearingPublishing", "BearingService", "BearingWire", "DaemonTestRig", "FuzzChecks", "TestSupport"]),
        .testTarget(name: "BearingDaemonTests", dependencies: ["BearingAttitude", "BearingCalibration", "BearingOnlineCalibration", "BearingCalibrationWorkflow", "BearingSelfTest", "BearingCompass", "BearingConfig", "BearingDaemon", "BearingLog", "BearingMQTT", "BearingMarine", "BearingModel", "BearingPOSIX", "BearingPublishing", "BearingRecording", "BearingSensors", "BearingSimulator", "BearingSocketDoor", "BearingWire", "BearingYAML", "DaemonTestRig", "FuzzChecks", "FuzzConfigChecks", "TestSupport"]),
        .testTarget(name: "BearingClientTests", dependencies: ["BearingClient", "BearingModel", "BearingPOSIX", "BearingPublishing", "BearingSocketDoor", "BearingWire", "TestSupport"]),
        .testTarget(name: "BearingWebDoorTests", dependencies: ["BearingCalibration", "BearingDaemon", "BearingI2C", "BearingLog", "BearingModel", "BearingOnlineCalibration", "BearingPOSIX", "BearingPublishing", "BearingService", "BearingSimulator", "BearingSocketDoor", "BearingWebDoor", "BearingWire", "DaemonTestRig", "TestSupport"], exclude: ["browser"]),
        .testTarget(name: "BearingSocketDoorTests", dependencies: ["BearingModel", "BearingPublishing", "BearingSocketDoor", "BearingWire", "TestSupport"]),
        .testTarget(name: "BearingYAMLTests", dependencies: ["BearingModel", "BearingYAML"]),
        .testTarget(name: "BearingConfigTests", dependencies: ["BearingConfig", "BearingModel", "BearingWire", "BearingYAML"]),
        .testTarget(name: "BearingI2CTests", dependencies: ["BearingI2C"]),
        .testTarget(name: "BearingSimulatorTests", dependencies: ["BearingI2C", "BearingModel", "BearingSensors", "BearingSimulator"]),
        .testTarget(name: "BearingCalibrationWorkflowTests", dependencies: ["BearingCalibration", "BearingCalibrationWorkflow", "BearingI2C", "BearingModel", "BearingSelfTest", "BearingSensors", "BearingSimulator"]),
        .testTarget(name: "BearingDiagnosticsTests", dependencies: ["BearingDiagnostics", "BearingPOSIX"]),
        .testTarget(name: "BearingTerminalTests", dependencies: ["BearingTerminal", "BearingWire"]),
        .testTarget(name: "RepositoryTests", dependencies: ["TestSupport"]),
        .testTarget(name: "BearingCLITests", dependencies: ["BearingAttitude", "BearingCalibration", "BearingOnlineCalibration", "BearingCompass", "BearingDaemon", "BearingMQTT", "BearingMarine", "BearingModel", "BearingPOSIX", "BearingPublishing", "BearingRecording", "BearingSimulator", "BearingWire", "DaemonTestRig", "TestSupport"], exclude: ["help"]),
    ],
    swiftLanguageModes: [.v6]
)
