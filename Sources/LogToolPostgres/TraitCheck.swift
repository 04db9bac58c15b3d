// LogToolPostgres builds with the package traits Postgres, LogTool: without them, its dependencies are
// neither resolved nor built (Package.swift): every other file of the module is inside
// `#if Postgres && LogTool`, so that this is the one error a build without the trait reports.
#if !(Postgres && LogTool)
#error(
  "LogToolPostgres needs the Chronicle package traits Postgres, LogTool: depend on Chronicle with .package(url: …, from: …, traits: [\"Postgres\", \"LogTool\"]), or build with --traits Postgres,LogTool"
)
#endif
