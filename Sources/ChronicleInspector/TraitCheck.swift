// ChronicleInspector builds with the package trait Inspector: without it, its dependencies are
// neither resolved nor built (Package.swift), and this says what to add.
#if !(Inspector)
#error(
  "ChronicleInspector needs the Chronicle package trait Inspector: depend on Chronicle with .package(url: …, from: …, traits: [\"Inspector\"]), or build with --traits Inspector"
)
#endif
