// swift-tools-version:6.0
import Foundation
import PackageDescription

// Benchmarks live in their own package so that GRDB, the peer they compare
// against, never becomes a dependency of Chronicle's users.
//
// SwiftPM names a path dependency after its directory, which is wherever the
// repository was cloned: derive that name instead of spelling it.
let chronicle = URL(fileURLWithPath: Context.packageDirectory)
  .deletingLastPathComponent().deletingLastPathComponent().standardizedFileURL.lastPathComponent

let package = Package(
  name: "ChronicleBench",
  platforms: [.macOS(.v15)],
  dependencies: [
    .package(path: "../.."),
    .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
  ],
  targets: [
    .executableTarget(
      name: "bench",
      dependencies: [
        .product(name: "Chronicle", package: chronicle),
        .product(name: "ChronicleLog", package: chronicle),
        .product(name: "LMDB", package: chronicle),
        .product(name: "GRDB", package: "GRDB.swift"),
      ]
    ),
    // The web inspector's response times, in its own executable so that `bench` never builds
    // Hummingbird and NIO.
    .executableTarget(
      name: "bench-inspector",
      dependencies: [
        .product(name: "Chronicle", package: chronicle),
        .product(name: "ChronicleLog", package: chronicle),
        .product(name: "ChronicleInspector", package: chronicle),
      ]
    ),
    // Shipping to PostgreSQL, in its own executable so that `bench` never builds postgres-nio.
    // Its PostgresServer.swift is a link to the ChroniclePostgres tests' private cluster.
    .executableTarget(
      name: "bench-postgres",
      dependencies: [
        .product(name: "Chronicle", package: chronicle),
        .product(name: "ChronicleLog", package: chronicle),
        .product(name: "ChroniclePostgres", package: chronicle),
        .product(name: "PostgresNIO", package: "postgres-nio"),
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)
