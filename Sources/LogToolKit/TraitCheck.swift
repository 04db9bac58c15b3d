// LogToolKit builds with the package trait LogTool: without it, its dependencies are
// neither resolved nor built (Package.swift): every other file of the module is inside
// `#if LogTool`, so that this is the one error a build without the trait reports.
#if !(LogTool)
#error(
  "LogToolKit needs the Chronicle package trait LogTool: depend on Chronicle with .package(url: …, from: …, traits: [\"LogTool\"]), or build with --traits LogTool"
)
#endif
