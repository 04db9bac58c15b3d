// swift-tools-version:6.1
import CompilerPluginSupport
import PackageDescription

// What an app adds with `.package(url: "https://github.com/…/chronicle", from: "0.1.0")` and the
// products Chronicle, ChronicleNavigation, ChronicleTesting, ChronicleLog, ChronicleLMDB and ChronicleCBOR: swift-crypto
// (with swift-asn1), and swift-custom-dump with xctest-dynamic-overlay for ChronicleTesting. The rest
// is opt-in by trait, and a dependency only a trait needs is neither resolved nor built without it:
//
// - `LogTool`: LogToolKit and the `logtool` command line (swift-argument-parser);
// - `Postgres`: ChroniclePostgres, shipping to PostgreSQL (postgres-nio, with NIO), and logtool's
//   ship, pull and server-verify;
// - `Inspector`: ChronicleInspector, the web inspector and `logtool serve` (Hummingbird; enables LogTool);
// - `Macros`: ChronicleMacros, `@CBORCodable` (swift-syntax).
//
// This package's own builds enable them all: `swift build --enable-all-traits` (tools/test does).
let package = Package(
  name: "Chronicle",
  // Built and tested on Linux. macOS needs LMDB from Homebrew (`brew install lmdb`); iOS and the
  // other Apple platforms have no system LMDB for pkg-config to find, so they are not declared.
  platforms: [.macOS(.v15)],
  products: [
    .library(name: "ChronicleLMDB", targets: ["ChronicleLMDB"]),
    .library(name: "ChronicleCBOR", targets: ["ChronicleCBOR"]),
    .library(name: "ChronicleLog", targets: ["ChronicleLog"]),
    .library(name: "Chronicle", targets: ["Chronicle"]),
    .library(name: "ChronicleTesting", targets: ["ChronicleTesting"]),
    .library(name: "ChronicleNavigation", targets: ["ChronicleNavigation"]),
    .library(name: "LogToolKit", targets: ["LogToolKit"]),
    .library(name: "ChroniclePostgres", targets: ["ChroniclePostgres"]),
    .library(name: "LogToolPostgres", targets: ["LogToolPostgres"]),
    .executable(name: "logtool", targets: ["logtool"]),
    .library(name: "ChronicleInspector", targets: ["ChronicleInspector"]),
    .library(name: "ChronicleMacros", targets: ["ChronicleMacros"]),
  ],
  traits: [
    .trait(name: "LogTool", description: "LogToolKit and the logtool command line (swift-argument-parser)."),
    .trait(name: "Postgres", description: "ChroniclePostgres and logtool's PostgreSQL commands (postgres-nio)."),
    .trait(
      name: "Inspector", description: "ChronicleInspector and logtool serve (Hummingbird).",
      enabledTraits: ["LogTool"]),
    .trait(name: "Macros", description: "ChronicleMacros: @CBORCodable (swift-syntax)."),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
    .package(url: "https://github.com/pointfreeco/swift-custom-dump", from: "1.3.0"),
    .package(url: "https://github.com/pointfreeco/xctest-dynamic-overlay", from: "1.4.0"),
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
    .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.3"),
    .package(url: "https://github.com/apple/swift-log", from: "1.6.0"),
    .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.6.0"),
    .package(url: "https://github.com/swiftlang/swift-syntax", "602.0.0"..<"604.0.0"),
  ],
  targets: [
    .systemLibrary(
      name: "CChronicleLMDB",
      pkgConfig: "lmdb",
      providers: [.apt(["liblmdb-dev"]), .brew(["lmdb"])]
    ),
    .target(name: "ChronicleLMDB", dependencies: ["CChronicleLMDB"]),
    .target(name: "ChronicleCBOR"),
    // SHA-256 with the x86-64 SHA extensions and no heap, for the log's per-entry hashes where the CPU
    // has them (swift-crypto's SHA256 elsewhere).
    .target(name: "CChronicleSHA256"),
    .target(
      name: "ChronicleLog",
      dependencies: ["ChronicleLMDB", "ChronicleCBOR", "CChronicleSHA256", .product(name: "Crypto", package: "swift-crypto")]
    ),
    .target(name: "Chronicle", dependencies: ["ChronicleLog"]),
    .target(name: "ChronicleNavigation", dependencies: ["Chronicle"]),
    .target(
      name: "ChronicleTesting",
      dependencies: [
        "Chronicle", .product(name: "CustomDump", package: "swift-custom-dump"),
        .product(name: "IssueReporting", package: "xctest-dynamic-overlay"),
        // Lets reported issues reach XCTest and Swift Testing on Linux too.
        .product(name: "IssueReportingTestSupport", package: "xctest-dynamic-overlay"),
      ]
    ),
    .target(
      name: "LogToolKit",
      dependencies: [
        "ChronicleLog", "Chronicle", argumentParser(when: "LogTool"),
        .product(name: "CustomDump", package: "swift-custom-dump"),
      ]
    ),
    // Ships logs to PostgreSQL. The only target that depends on NIO: the core library stays free of it.
    .target(
      name: "ChroniclePostgres",
      dependencies: ["ChronicleLog", "ChronicleCBOR", postgresNIO]
    ),
    // logtool's PostgreSQL commands (ship, pull, server-verify): LogToolKit itself stays free of NIO.
    .target(
      name: "LogToolPostgres",
      dependencies: [
        "LogToolKit", "ChronicleLog", "ChroniclePostgres", postgresNIO, argumentParser(when: "LogTool"),
      ]
    ),
    // `logtool serve`: the web inspector's HTTP server and its page (kept out of LogToolKit, which stays free of NIO).
    // The page's files (Page/) are compiled into the module as byte arrays (`PackageResources`), so a
    // `logtool` copied anywhere serves its page with no resource bundle to find at run time.
    .target(
      name: "ChronicleInspector",
      dependencies: [
        "ChronicleCBOR", "ChronicleLog", "Chronicle", "LogToolKit",
        .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Inspector"])),
        .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["Inspector"])),
        .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Inspector"])),
        .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Inspector"])),
        argumentParser(when: "Inspector"),
      ],
      resources: [
        .embedInCode("Page/index.html"), .embedInCode("Page/inspector.css"), .embedInCode("Page/inspector.js"),
      ]),
    // `@CBORCodable`: generated `CBORCodable` conformances. The macro target is the only one that
    // depends on swift-syntax, which is therefore built once, for the host: the core library stays
    // free of it, apps opt in by using the product, and the macro's tests drive the compiler
    // (ChronicleMacrosTests) instead of linking swift-syntax to expand in-process, which built it
    // a second time, for the test product.
    .macro(
      name: "ChronicleMacrosPlugin",
      dependencies: [
        .product(name: "SwiftSyntax", package: "swift-syntax", condition: .when(traits: ["Macros"])),
        .product(name: "SwiftSyntaxMacros", package: "swift-syntax", condition: .when(traits: ["Macros"])),
        .product(name: "SwiftDiagnostics", package: "swift-syntax", condition: .when(traits: ["Macros"])),
        .product(name: "SwiftCompilerPlugin", package: "swift-syntax", condition: .when(traits: ["Macros"])),
      ]),
    .target(
      name: "ChronicleMacros", dependencies: ["ChronicleCBOR", .target(name: "ChronicleMacrosPlugin", condition: .when(traits: ["Macros"]))]),
    // The full logtool with --traits Postgres,Inspector; --traits LogTool builds it without serve and the
    // PostgreSQL commands, without NIO.
    .executableTarget(
      name: "logtool",
      dependencies: [
        "LogToolKit", .target(name: "ChronicleInspector", condition: .when(traits: ["Inspector"])),
        .target(name: "LogToolPostgres", condition: .when(traits: ["Postgres"])),
      ],
      path: "tools/logtool"),
    .target(
      name: "DemoLedger", dependencies: ["Chronicle", "ChronicleNavigation", "LogToolKit"], path: "tools/demo/DemoLedger"),
    .executableTarget(
      name: "chronicle-demo",
      dependencies: [
        "DemoLedger", "LogToolKit", "Chronicle", "ChronicleNavigation", argumentParser(when: "LogTool"),
      ],
      path: "tools/demo/Demo"),
    // Two devices of one shared stream, through a private PostgreSQL cluster: `swift run --traits Postgres chronicle-sync-demo`.
    .executableTarget(
      name: "chronicle-sync-demo",
      dependencies: ["Chronicle", .target(name: "ChroniclePostgres", condition: .when(traits: ["Postgres"])), postgresNIO],
      path: "tools/demo/SyncDemo"),
    .executableTarget(
      name: "ledger-tool",
      dependencies: [
        "DemoLedger", "LogToolKit", "ChronicleInspector", argumentParser(when: "Inspector"),
      ],
      path: "tools/demo/LedgerTool"),
    // MARK: Test support (Tests/Support) and helper executables (Tests/Helpers)
    // Directories, random numbers, child processes, a log's raw bytes: for every test target and helper.
    .target(name: "ChronicleTestTools", dependencies: ["ChronicleLMDB"], path: "Tests/Support/ChronicleTestTools"),
    // The sample reducers the engine's tests and `chronicle-probe` share.
    .target(name: "ChronicleTestSupport", dependencies: ["Chronicle"], path: "Tests/Support/ChronicleTestSupport"),
    // The apps of fixtures/ and the worked example of docs/log-format.md: written by `chronicle-fixtures`,
    // read back by the log's tests.
    .target(name: "FixtureApp", dependencies: ["ChronicleLog", "ChronicleLMDB"], path: "Tests/Support/FixtureApp"),
    .executableTarget(
      name: "chronicle-log-probe", dependencies: ["ChronicleLog", "ChronicleTestTools"], path: "Tests/Helpers/chronicle-log-probe"),
    .executableTarget(
      name: "chronicle-probe", dependencies: ["Chronicle", "ChronicleNavigation", "ChronicleTestTools", "ChronicleTestSupport"],
      path: "Tests/Helpers/chronicle-probe"),
    .executableTarget(
      name: "chronicle-pg-probe",
      dependencies: ["ChroniclePostgres", "ChronicleTestTools", postgresNIO],
      path: "Tests/Helpers/chronicle-pg-probe"),
    .executableTarget(
      name: "chronicle-sync-probe",
      dependencies: ["Chronicle", "ChroniclePostgres", "ChronicleTestTools", "ChronicleTestSupport", postgresNIO],
      path: "Tests/Helpers/chronicle-sync-probe"),
    .executableTarget(name: "chronicle-fixtures", dependencies: ["ChronicleLog", "FixtureApp"], path: "tools/fixtures"),
    .testTarget(name: "ChronicleLMDBTests", dependencies: ["ChronicleLMDB", "ChronicleTestTools"]),
    .testTarget(name: "ChronicleCBORTests", dependencies: ["ChronicleCBOR", "ChronicleTestTools"]),
    .testTarget(
      name: "ChronicleLogTests", dependencies: ["ChronicleLog", "ChronicleLMDB", "ChronicleTestTools", "FixtureApp", "chronicle-log-probe"]),
    .testTarget(
      name: "LogToolKitTests",
      dependencies: [
        "LogToolKit", "logtool", "ChronicleLog", "ChronicleLMDB", "ChronicleTestTools", "chronicle-log-probe", "Chronicle",
        "DemoLedger", "ledger-tool", "chronicle-demo",
      ],
      exclude: ["Golden"]),
    .testTarget(
      name: "ChronicleTests",
      dependencies: [
        "Chronicle", "ChronicleTesting", "ChronicleNavigation", "ChronicleLMDB", "ChronicleTestTools", "ChronicleTestSupport",
        "chronicle-probe", "chronicle-log-probe",
      ]),
    .testTarget(
      name: "ChroniclePostgresTests",
      dependencies: [
        "ChroniclePostgres", "ChronicleLog", "Chronicle", "ChronicleTestTools", "ChronicleTestSupport",
        .product(name: "PostgresNIO", package: "postgres-nio"), "chronicle-pg-probe", "chronicle-sync-probe",
        "chronicle-log-probe", "logtool", "chronicle-sync-demo",
      ]),
    .testTarget(
      name: "ChronicleInspectorTests",
      dependencies: [
        "ChronicleInspector", "LogToolKit", "ChronicleLog", "Chronicle", "ChronicleTestTools", "DemoLedger", "logtool",
        "ledger-tool", "chronicle-log-probe",
      ]),
    // The generated conformances compiled in (the macro applied as an app applies it), and the
    // compiler run on small sources with the built plugin, for the expansions and the refusals.
    // Depending on the macro only through ChronicleMacros keeps the test product built once, for
    // the target.
    .testTarget(
      name: "ChronicleMacrosTests",
      dependencies: ["ChronicleMacros", "ChronicleCBOR", "ChronicleLog", "Chronicle", "ChronicleTestTools"]),
    .testTarget(
      name: "ChronicleTestingTests", dependencies: ["ChronicleTesting", "ChronicleTestTools", "ChronicleTestSupport"]),
  ],
  swiftLanguageModes: [.v6]
)

/// swift-argument-parser, for targets that only build with `trait`.
func argumentParser(when trait: String) -> Target.Dependency {
  .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: [trait]))
}

/// postgres-nio, for targets that only build with the `Postgres` trait.
var postgresNIO: Target.Dependency {
  .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Postgres"]))
}
