// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "Chronicle",
  platforms: [.macOS(.v15), .iOS(.v18)],
  products: [
    .library(name: "LMDB", targets: ["LMDB"]),
    .library(name: "ChronicleLog", targets: ["ChronicleLog"]),
    .library(name: "Chronicle", targets: ["Chronicle"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    .package(url: "https://github.com/apple/swift-collections", from: "1.1.0"),
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
    .target(
      name: "Chronicle",
      dependencies: ["ChronicleLog", .product(name: "DequeModule", package: "swift-collections")]
    ),
    .executableTarget(name: "chronicle-demo", dependencies: ["Chronicle"], path: "tools/demo"),
    .executableTarget(name: "chronicle-probe", dependencies: ["ChronicleLog", "Chronicle"], path: "Tests/Probe"),
    .executableTarget(name: "chronicle-fixtures", dependencies: ["ChronicleLog"], path: "tools/fixtures"),
    .testTarget(name: "LMDBTests", dependencies: ["LMDB"]),
    .testTarget(name: "ChronicleLogTests", dependencies: ["ChronicleLog", "LMDB", "chronicle-probe"]),
    .testTarget(name: "ChronicleTests", dependencies: ["Chronicle", "LMDB", "chronicle-probe"]),
  ],
  swiftLanguageModes: [.v6]
)
