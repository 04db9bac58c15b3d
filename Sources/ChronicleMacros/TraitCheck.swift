// ChronicleMacros builds with the package trait Macros: without it, its dependencies are
// neither resolved nor built (Package.swift): every other file of the module is inside
// `#if Macros`, so that this is the one error a build without the trait reports.
#if !(Macros)
#error(
  "ChronicleMacros needs the Chronicle package trait Macros: depend on Chronicle with .package(url: …, from: …, traits: [\"Macros\"]), or build with --traits Macros"
)
#endif
