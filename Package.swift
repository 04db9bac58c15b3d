// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "Chronicle",
  platforms: [.macOS(.v15), .iOS(.v18)],
  products: [
    .library(name: "LMDB", targets: ["LMDB"]),
    .library(name: "ChronicleLog", targets: ["ChronicleLog"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
  ],
  targets: [
    .systemLibrary(
      name: "CLMDB",
      pkgConfig: "lmdb",
      providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
    ),
    .target(name: "LMDB", dependencies: ["CLMDB"]),
    .target(
      name: "ChronicleLog",
      dependencies: ["LMDB", .product(name: "Crypto", package: "swift-crypto")]
    ),
    .executableTarget(name: "chronicle-probe", dependencies: ["ChronicleLog"], path: "Tests/Probe"),
    .testTarget(name: "LMDBTests", dependencies: ["LMDB"]),
    .testTarget(name: "ChronicleLogTests", dependencies: ["ChronicleLog", "LMDB", "chronicle-probe"]),
  ],
  swiftLanguageModes: [.v6]
)
