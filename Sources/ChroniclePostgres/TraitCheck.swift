// ChroniclePostgres builds with the package trait Postgres: without it, its dependencies are
// neither resolved nor built (Package.swift): every other file of the module is inside
// `#if Postgres`, so that this is the one error a build without the trait reports.
#if !(Postgres)
#error(
  "ChroniclePostgres needs the Chronicle package trait Postgres: depend on Chronicle with .package(url: …, from: …, traits: [\"Postgres\"]), or build with --traits Postgres"
)
#endif
