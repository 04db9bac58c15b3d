// swift-tools-version:6.1
// An app that adds Chronicle's core products and nothing else (tools/check-weight): what it
// resolves must stay swift-crypto, swift-asn1, swift-custom-dump and xctest-dynamic-overlay.
import PackageDescription

let package = Package(
  name: "CoreConsumer",
  platforms: [.macOS(.v15)],
  dependencies: [.package(name: "Chronicle", path: "../..")],
  targets: [
    .executableTarget(
      name: "App",
      dependencies: [
        .product(name: "Chronicle", package: "Chronicle"),
        .product(name: "ChronicleNavigation", package: "Chronicle"),
      ]),
    .testTarget(
      name: "AppTests", dependencies: ["App", .product(name: "ChronicleTesting", package: "Chronicle")]),
  ],
  swiftLanguageModes: [.v6]
)
