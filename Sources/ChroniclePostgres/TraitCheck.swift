// ChroniclePostgres builds with the package trait Postgres: without it, its dependencies are
// neither resolved nor built (Package.swift), and this says what to add.
#if !(Postgres)
#error(
  "ChroniclePostgres needs the Chronicle package trait Postgres: depend on Chronicle with .package(url: …, from: …, traits: [\"Postgres\"]), or build with --traits Postgres"
)
#endif
