// swift-tools-version: 6.0
import PackageDescription

// Layering (each target only depends on the ones above it):
//   CGPS              C bridge to libgps (gpsd's client library)
//   CI2C              C bridge to libi2c and the i2c-dev ioctls
//   CYAML             C bridge to libyaml (config and board files)
//   CMosquitto        C bridge to libmosquitto (the MQTT door)
//   CBearingSys       C shim for Linux calls Swift's Glibc module lacks (accept4, eventfd)
//   BearingCore       pure values, gpsd JSON dialect, operator specs, WMM, heading maths — no I/O (libc's
//                     snprintf through CBearingSys for printf-style numbers)
//   BearingSensors    magnetometer chip drivers over the I2CBus protocol, the reader thread
//   BearingSimulator  pure generators for demos and tests (NMEA tracks, register-level chip models)
//   BearingYAML       YAML documents composed from libyaml's events, with Yams's scalar rules
//   BearingLog        the daemon's logger: levels, metadata, lines for journald on stderr
//   BearingIO         /dev/i2c-N, the gpsd and MQTT client delegate sources
//   BearingAgent      wiring: adapters → publishers → socket server, logs, config
//   bearing           the command-line tool
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
        .target(
            name: "BearingCore",
            dependencies: [
                "CBearingSys",
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]
        ),
        .target(
            name: "BearingSensors",
            dependencies: ["BearingCore", "BearingIO"]
        ),
        .target(
            name: "BearingSimulator",
            dependencies: ["BearingCore", "BearingPOSIX"]
        ),
        .target(name: "BearingLog"),
        .target(
            name: "BearingPOSIX",
            dependencies: ["CBearingSys", "BearingCore"]
        ),
        .target(
            name: "BearingIO",
            dependencies: ["CGPS", "CI2C", "CMosquitto", "BearingPOSIX", "BearingCore"]
        ),
        .target(
            name: "BearingTerminal",
            dependencies: ["BearingCore"]
        ),
        .target(
            name: "BearingClient",
            dependencies: ["BearingCore", "BearingPOSIX"]
        ),
        .target(
            name: "BearingAgent",
            dependencies: [
                "BearingCore", "BearingSensors", "BearingIO",
                .product(name: "OpenCombine", package: "OpenCombine"),
                .product(name: "OpenCombineDispatch", package: "OpenCombine"),
                "BearingLog",
                "BearingYAML",
            ]
        ),
        .executableTarget(
            name: "bearing",
            dependencies: [
                "BearingAgent", "BearingClient", "BearingTerminal", "BearingSimulator", "BearingSensors", "BearingIO", "BearingCore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                "BearingLog",
            ]
        ),
        // libFuzzer targets (scripts/fuzz builds them with -sanitize=fuzzer -DFUZZING); a plain build makes
        // them corpus replayers.
        .target(
            name: "FuzzChecks",
            dependencies: ["BearingCore"],
            path: "Fuzz/Checks"
        ),
        .target(
            name: "FuzzConfigChecks",
            dependencies: ["FuzzChecks", "BearingAgent"],
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
            dependencies: ["BearingAgent", "BearingClient", "BearingIO", "BearingCore", "BearingSimulator",
                           "BearingLog"],
            path: "Tests/TestSupport"
        ),
        .testTarget(
            name: "BearingCoreTests",
            dependencies: [
                "BearingCore", "BearingSimulator", "TestSupport", "FuzzChecks",
                .product(name: "CombineSchedulers", package: "combine-schedulers"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]
        ),
        .testTarget(
            name: "BearingSensorsTests",
            dependencies: [
                "BearingSensors", "BearingSimulator", "BearingCore", "TestSupport",
                .product(name: "CombineSchedulers", package: "combine-schedulers"),
                .product(name: "OpenCombine", package: "OpenCombine"),
            ]
        ),
        .testTarget(
            name: "BearingPOSIXTests",
            dependencies: ["BearingPOSIX", "BearingCore", "TestSupport"]
        ),
        .testTarget(
            name: "BearingClientTests",
            dependencies: ["BearingClient", "BearingAgent", "BearingCore", "TestSupport"]
        ),
        .testTarget(
            name: "BearingIOTests",
            dependencies: ["BearingIO", "BearingCore", "CGPS", "TestSupport"]
        ),
        .testTarget(
            name: "BearingAgentTests",
            dependencies: ["BearingAgent", "BearingLog", "BearingYAML", "BearingClient", "BearingIO", "BearingCore", "BearingSimulator", "BearingSensors", "TestSupport", "FuzzConfigChecks"]
        ),
        .testTarget(
            name: "BearingCLITests",
            dependencies: ["BearingCore", "BearingIO", "BearingTerminal", "TestSupport"],
            exclude: ["help"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
