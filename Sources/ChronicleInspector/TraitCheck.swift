// ChronicleInspector builds with the package trait Inspector: without it, its dependencies are
// neither resolved nor built (Package.swift): every other file of the module is inside
// `#if Inspector`, so that this is the one error a build without the trait reports.
#if !(Inspector)
#error(
  "ChronicleInspector needs the Chronicle package trait Inspector: depend on Chronicle with .package(url: …, from: …, traits: [\"Inspector\"]), or build with --traits Inspector"
)
#endif
