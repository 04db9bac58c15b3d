// LogToolPostgres builds with the package traits Postgres, LogTool: without them, its dependencies are
// neither resolved nor built (Package.swift), and this says what to add.
#if !(Postgres && LogTool)
#error(
  "LogToolPostgres needs the Chronicle package traits Postgres, LogTool: depend on Chronicle with .package(url: …, from: …, traits: [\"Postgres\", \"LogTool\"]), or build with --traits Postgres,LogTool"
)
#endif
