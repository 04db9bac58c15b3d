// LogToolKit builds with the package trait LogTool: without it, its dependencies are
// neither resolved nor built (Package.swift), and this says what to add.
#if !(LogTool)
#error(
  "LogToolKit needs the Chronicle package trait LogTool: depend on Chronicle with .package(url: …, from: …, traits: [\"LogTool\"]), or build with --traits LogTool"
)
#endif
