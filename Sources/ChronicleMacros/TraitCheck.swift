// ChronicleMacros builds with the package trait Macros: without it, its dependencies are
// neither resolved nor built (Package.swift), and this says what to add.
#if !(Macros)
#error(
  "ChronicleMacros needs the Chronicle package trait Macros: depend on Chronicle with .package(url: …, from: …, traits: [\"Macros\"]), or build with --traits Macros"
)
#endif
